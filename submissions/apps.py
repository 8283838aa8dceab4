from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = "submissions from outside teams"
    default_auto_field = "django.db.models.BigAutoField"
