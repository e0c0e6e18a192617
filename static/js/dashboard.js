/* Pool Patrol dashboard: htmx settings the templates rely on. No inline script (CSP). */
(function () {
  if (!window.htmx) return;
  // 422 carries a form with its errors: swap it like a success so the person sees them.
  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "422", swap: true },
    { code: "[45]..", swap: false, error: true },
    { code: "...", swap: false },
  ];
  // Anything else that fails says so where the person clicked, instead of nothing.
  document.addEventListener("htmx:responseError", function (event) {
    var target = event.detail.target;
    if (!target) return;
    var note = document.createElement("p");
    note.className = "notice notice-error";
    note.setAttribute("role", "alert");
    var status = event.detail.xhr ? event.detail.xhr.status : "";
    note.textContent =
      status === 403
        ? "You do not have permission to do that."
        : "That did not work (HTTP " + status + "). Reload the page and try again.";
    target.prepend(note);
  });
})();
