"""manage.py compilemessages — Django's, for the project's catalogs (locale/) only.

Django's walks every folder named ``locale`` under the current one, and so
the installed packages in ``.venv`` too; those ship compiled.
"""

from typing import Any

from django.core.management.commands import compilemessages

# Folders that hold no catalog of ours (dependencies, tools, data).
NOT_OURS = [".venv", ".venv/*", ".tools", ".tools/*", "node_modules", "node_modules/*", "var"]


class Command(compilemessages.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        options["ignore_patterns"] = [*(options.get("ignore_patterns") or []), *NOT_OURS]
        super().handle(*args, **options)
