"""Ask about this case, the page's side: where each cited record is shown.

The answering itself (scope, intents, the rules and model backends, the
faithfulness check) is workflow logic in ``caseloop.case_qa``; the form is
``dashboard.case_forms.AskForm`` and the view ``dashboard.case_views.case_ask``.
"""

from django.urls import reverse

from caseloop.case_qa.records import Link

# Records on the case page, by the key's prefix: the anchor of their section.
ON_THE_CASE_PAGE = ("verification", "event")


def case_page_links(case_id: str) -> Link:
    """A record key's address: its anchor on the case page, or the vanpool's or rider's page."""
    page = reverse("case-detail", args=[case_id])

    def link(key: str) -> str:
        kind, _, ident = key.partition(":")
        if key == "case":
            return f"{page}#summary"
        if key == "policy":
            return ""  # the program's policy has no page
        if kind == "vanpool":
            return reverse("vanpool-detail", args=[ident])
        if kind == "employee":
            return reverse("employee-detail", args=[ident])
        if kind in ON_THE_CASE_PAGE:
            return f"{page}#{kind}-{ident}"
        return f"{page}#{key}"  # an email, by its MSG-… id

    return link
