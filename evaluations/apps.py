from django.apps import AppConfig, apps
from django.db.models.signals import post_delete, post_save

# Whatever changes a leaderboard figure; see evaluations.leaderboard.
RESULT_MODELS = (
    "trajectories.Rollout",
    "trajectories.FailureLabel",
    "evaluations.Entry",
    "evaluations.PublishedResult",
    "evaluations.AgentModel",
    "evaluations.Harness",
    "tasks.Task",
    "tasks.BenchmarkVersion",
)


class EvaluationsConfig(AppConfig):
    name = "evaluations"

    def ready(self) -> None:
        from .leaderboard import on_result_change

        for label in RESULT_MODELS:
            sender = apps.get_model(label)
            for signal in (post_save, post_delete):
                signal.connect(on_result_change, sender=sender, dispatch_uid=f"leaderboard-cache:{label}")
