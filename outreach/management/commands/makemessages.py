"""manage.py makemessages — Django's, reading only what riders read.

The catalogs in locale/ hold rider copy alone: staff pages stay in English, so
a staff template's words (the admin's "Home") must not become entries every
language has to translate. With no locale named it updates every shipped
language's catalog, keeps each entry's file but not its line (so a moved line
does not churn every catalog) and drops entries no source uses any more.
``make messages`` runs it and then ``compilemessages``.
"""

import os
from typing import Any

from django.core.management.commands import makemessages

from poolpatrol.languages import SHIPPED

# Where rider copy is written, relative to the project root: the email
# templates (answers included), the rider's pages (the answer page among them),
# the facts in words, and the answer page's choices and confirmations.
RIDER_COPY: tuple[str, ...] = (
    "templates/emails",
    "templates/rider",
    "outreach/localize.py",
    "outreach/answer_page.py",
    "outreach/answer_views.py",
)
# English is the source language: its words are the catalogs' msgids.
CATALOG_LOCALES: tuple[str, ...] = tuple(
    language.locale for language in SHIPPED if language.code != "en"
)


class Command(makemessages.Command):
    help = (
        "Update the rider copy's catalogs (locale/<locale>/LC_MESSAGES/django.po) "
        "from the templates and modules riders read; every shipped language by default."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if not (options["locale"] or options["all"]):
            options["locale"] = list(CATALOG_LOCALES)
        options["no_obsolete"] = True
        options["add_location"] = options["add_location"] or "file"
        super().handle(*args, **options)

    def find_files(self, root: str) -> list[Any]:
        """The rider copy under ``root`` only (RIDER_COPY), never a staff page."""
        found: list[Any] = []
        for path in RIDER_COPY:
            where = os.path.normpath(os.path.join(root, path))
            if os.path.isdir(where):
                found.extend(super().find_files(where))
            elif os.path.isfile(where):
                dirpath, filename = os.path.split(where)
                found.append(
                    self.translatable_file_class(dirpath, filename, self.default_locale_path)
                )
        return sorted(found)
