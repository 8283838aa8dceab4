from django.apps import AppConfig, apps
from django.db.models.signals import post_delete, post_init, post_save

# Whatever changes a leaderboard figure; see evaluations.boards.invalidation.
RESULT_MODELS = (
    "trajectories.Rollout",
    "trajectories.FailureLabel",
    "evaluations.Entry",
    "evaluations.PublishedResult",
    "evaluations.PublishedFigure",
    "agents.AgentModel",
    "agents.Harness",
    "tasks.Task",
    "tasks.BenchmarkVersion",
)


class EvaluationsConfig(AppConfig):
    name = "evaluations"

    def ready(self) -> None:
        from evaluations.boards.invalidation import on_result_change, on_rollout_deleted, on_rollout_saved, remember_rollout

        for label in RESULT_MODELS:
            sender = apps.get_model(label)
            if label == "trajectories.Rollout":
                post_delete.connect(on_rollout_deleted, sender=sender, dispatch_uid=f"leaderboard-cache-delete:{label}")
                # Rollouts are saved often while they run; see invalidation.on_rollout_saved.
                post_init.connect(remember_rollout, sender=sender, dispatch_uid="leaderboard-cache-init")
                post_save.connect(on_rollout_saved, sender=sender, dispatch_uid=f"leaderboard-cache-save:{label}")
            else:
                post_delete.connect(on_result_change, sender=sender, dispatch_uid=f"leaderboard-cache-delete:{label}")
                post_save.connect(on_result_change, sender=sender, dispatch_uid=f"leaderboard-cache-save:{label}")
