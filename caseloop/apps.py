from django.apps import AppConfig


class CaseloopConfig(AppConfig):
    name = "caseloop"
    verbose_name = "Case loop"
