from django.apps import AppConfig


class OutreachConfig(AppConfig):
    name = "outreach"
    verbose_name = "Outreach email"

    def ready(self) -> None:
        from anymail.signals import inbound, tracking

        from outreach import webhooks

        # dispatch_uid: connected once however often ready() runs.
        inbound.connect(webhooks.handle_inbound, dispatch_uid="outreach.webhooks.inbound")
        tracking.connect(webhooks.handle_tracking, dispatch_uid="outreach.webhooks.tracking")
