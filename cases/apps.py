from django.apps import AppConfig


class CasesConfig(AppConfig):
    name = "cases"
    verbose_name = "Audit cases"

    def ready(self) -> None:
        from cases.desk import check_sla_settings

        check_sla_settings()  # a REVIEW_SLA_HOURS naming no kind fails at start-up, not later
