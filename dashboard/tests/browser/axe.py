"""axe-core, run inside the page under test (the npm package, read from node_modules/).

``make browser`` (a step of ``make test``) installs it with ``npm ci`` from
package-lock.json; it runs offline, in the page, with no network.
"""

from pathlib import Path
from typing import Any

from django.conf import settings

AXE_JS = Path(settings.BASE_DIR) / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
# Moderate in axe, but named by issue 34 (point 22): enforced too.
ALWAYS = ("landmark-unique", "page-has-heading-one")


def axe_script() -> Path:
    if not AXE_JS.exists():
        raise FileNotFoundError(
            f"{AXE_JS} is missing: run `npm ci --no-audit --no-fund` in the project folder "
            "(`make browser` does it)."
        )
    return AXE_JS


def violations(page: Any) -> list[dict[str, Any]]:
    """axe's serious and critical violations on the page as it is now (WCAG 2.x A and AA).

    axe is added as an inline script: the page's CSP refuses it unless the test's
    browser context bypasses CSP (``browser_context_args(bypass_csp=True)``).
    """
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(axe_script()))
    found = page.evaluate(
        """async () => {
            const result = await axe.run(document, {
                runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa",
                                                "wcag22aa", "best-practice"]},
                resultTypes: ["violations"],
            });
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target.join(" "), summary: n.failureSummary})),
            }));
        }"""
    )
    return [v for v in found if v["impact"] in BLOCKING or v["id"] in ALWAYS]


def report(where: str, found: list[dict[str, Any]]) -> str:
    """The violations as a reader fixes them: rule, what it asks, each element and why."""
    lines = []
    for violation in found:
        lines.append(f"{where}: [{violation['impact']}] {violation['id']} — {violation['help']}")
        for node in violation["nodes"][:8]:
            summary = " ".join((node["summary"] or "").split())
            lines.append(f"    {node['target']}: {summary[:300]}")
    return "\n".join(lines)
