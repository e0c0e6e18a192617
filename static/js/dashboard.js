/* Pool Patrol dashboard: htmx settings the templates rely on. No inline script (CSP).
   Loaded with `defer` right after htmx (base.html), so htmx exists when this runs. */
(function () {
  if (!window.htmx) {
    // htmx failed to load: the forms still post and redirect without it.
    return;
  }
  // 422 carries a form with its errors, 409 a card another reviewer holds (who, and
  // "decide anyway"): swap them like a success so the person sees them.
  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "422", swap: true },
    { code: "409", swap: true },
    { code: "[45]..", swap: false, error: true },
    { code: "...", swap: false },
  ];

  function focusOn(element) {
    if (!element) return;
    if (element.tabIndex < 0 && !element.hasAttribute("tabindex")) element.setAttribute("tabindex", "-1");
    element.focus();
  }

  // The control a field error belongs to (it names the error in aria-describedby), or a
  // form-wide error itself.
  function firstError(root) {
    var error = root.querySelector(".field-error[id], [role=alert]");
    if (!error) return null;
    if (error.id) {
      var control = root.querySelector('[aria-describedby~="' + error.id + '"]');
      if (control && control.tagName === "FIELDSET") control = control.querySelector("input, select, textarea");
      if (control) return control;
    }
    return error;
  }

  // A box that scrolls is reachable by keyboard, so it can be scrolled without a mouse;
  // one that fits is not an extra tab stop.
  function keyboardScroll(root) {
    root.querySelectorAll(".chart-scroll, .email-body, .table-wrap").forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
      if (scrolls) box.setAttribute("tabindex", "0");
      else if (box.getAttribute("tabindex") === "0") box.removeAttribute("tabindex");
    });
  }

  function announce(text) {
    var region = document.getElementById("announce");
    if (!region) return;
    region.textContent = "";
    // A fresh text node after a tick, so the same words are announced again.
    window.setTimeout(function () { region.textContent = text; }, 50);
  }

  // After a swap, focus goes where the person's next step is (a field to fix, the outcome,
  // the field to fill) instead of falling back to <body>.
  document.addEventListener("htmx:afterSettle", function (event) {
    var id = event.detail.target && event.detail.target.id;
    var fresh = id ? document.getElementById(id) : null;
    if (!fresh) return;
    keyboardScroll(fresh);
    // A filtered list says its new count (it is no live region: the whole list would be read).
    var summary = fresh.querySelector(":scope > [data-summary]");
    if (summary) {
      announce(summary.textContent.trim());
      return;
    }
    focusOn(
      firstError(fresh) ||
        fresh.querySelector("[data-swap-focus]") ||
        fresh.querySelector("[data-focus-fallback]")
    );
  });

  // Anything else that fails says so where the person clicked, instead of nothing.
  function showRequestError(target, text) {
    if (!target) return;
    target.querySelectorAll(".js-request-error").forEach(function (old) { old.remove(); });
    var note = document.createElement("p");
    note.className = "notice notice-error js-request-error";
    note.setAttribute("role", "alert");
    note.textContent = text;
    target.prepend(note);
    focusOn(note);
  }
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : "";
    showRequestError(
      event.detail.target,
      status === 403
        ? "You do not have permission to do that."
        : "That did not work (HTTP " + status + "). Reload the page and try again."
    );
  });
  document.addEventListener("htmx:sendError", function (event) {
    showRequestError(event.detail.target, "The server could not be reached. Check the connection and try again.");
  });

  function onLoad() { keyboardScroll(document); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onLoad);
  else onLoad();
  var resizing;
  window.addEventListener("resize", function () {
    window.clearTimeout(resizing);
    resizing = window.setTimeout(onLoad, 150);
  });
})();
