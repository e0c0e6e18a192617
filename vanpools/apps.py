from django.apps import AppConfig


class VanpoolsConfig(AppConfig):
    name = "vanpools"
    verbose_name = "Vanpools and roster"
