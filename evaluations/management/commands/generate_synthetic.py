"""python manage.py generate_synthetic: a plausible, made-up benchmark version.

For load tests and demos of the leaderboard at full size: N entries x 36
tasks x k rollouts with ~150 steps each, in their own benchmark version
(default "synthetic", benchmark "Synthetic") so that they never mix with real
results. Rewards follow a per-model skill and a per-task difficulty; some
rollouts fail (reward 0) and a few hit infrastructure errors; every rollout
has a best-so-far curve, tokens, cost and agent time. Rows are written with
bulk_create, so the leaderboard cache is invalidated explicitly at the end.
"""
from __future__ import annotations

import random
from datetime import timedelta

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand
from django.db import transaction
from django.utils import timezone

from evaluations.boards import invalidation
from agents.models import AgentModel, Harness
from tasks.models import BenchmarkVersion, Task
from trajectories import services as trajectories, statuses
from trajectories.models import Rollout, RolloutDocument, Step

# AutoLab's shape: 15/10/7/4 tasks per category, budgets 25 x 2 h, 7 x 4 h, 3 x 8 h, 1 x 12 h.
CATEGORIES = [("system_optimization", 15), ("puzzle_and_challenge", 10), ("model_development", 7), ("cuda", 4)]
BUDGETS = [7200] * 25 + [14400] * 7 + [28800] * 3 + [43200]
HARNESSES = ["terminus-2", "mini-swe-agent"]
BATCH = 2000
# Causes of trajectories.failures.rules that a zero-score rollout is given.
ZERO_CAUSES = ["no_improvement", "correctness_failed", "build_failed", "no_artifact", "budget_exhausted"]


def category_of(index: int, n_tasks: int) -> str:
    """Spread categories over n tasks in AutoLab's proportions."""
    position = index * 36 / n_tasks
    for name, count in CATEGORIES:
        if position < count:
            return name
        position -= count
    return CATEGORIES[-1][0]


class Command(BenchmarkCommand):
    help = "Create a synthetic benchmark version with N entries x T tasks x k rollouts (bulk, for load tests)."


    def add_arguments(self, parser):
        parser.add_argument("--entries", type=int, default=17)
        parser.add_argument("--tasks", type=int, default=36)
        parser.add_argument("--rollouts", type=int, default=3, help="rollouts per entry and task (k)")
        parser.add_argument("--steps", type=int, default=150, help="about this many steps per rollout (0: none)")
        parser.add_argument("--version", default="synthetic", help="benchmark version name to create")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--replace", action="store_true", help="delete that version's synthetic data first")

    def handle(self, *args, entries, tasks, rollouts, steps, version, seed, replace, **options):
        if min(entries, tasks, rollouts) < 1 or steps < 0:
            raise CommandError("--entries, --tasks and --rollouts must be at least 1, --steps at least 0")
        existing = BenchmarkVersion.objects.filter(name=version).first()
        if existing and not replace:
            raise CommandError(f"version {version!r} exists; pass --replace to rebuild it")
        rng = random.Random(seed)
        with transaction.atomic():
            if existing:
                self.delete_version(existing)
            bench = BenchmarkVersion.objects.create(
                name=version, benchmark="Synthetic", description="Synthetic data from generate_synthetic.", demo=True
            )
            task_rows = self.make_tasks(bench, tasks, rng)
            pairs = self.make_entries(entries, rng)
            created = self.make_rollouts(bench, task_rows, pairs, rollouts, rng)
            n_steps = self.make_steps(created, steps, rng) if steps else 0
        invalidation.invalidate()
        self.stdout.write(
            self.style.SUCCESS(
                f"version {version}: {len(task_rows)} tasks, {len(pairs)} entries, {len(created)} rollouts, {n_steps} steps"
            )
        )

    def delete_version(self, version: BenchmarkVersion) -> None:
        doomed = Rollout.objects.filter(task__version=version)
        Step.objects.filter(rollout__in=doomed).delete()
        doomed.delete()
        version.published_results.all().delete()
        version.entries.all().delete()
        version.tasks.all().delete()
        version.delete()

    def make_tasks(self, version: BenchmarkVersion, n: int, rng: random.Random) -> list[Task]:
        rows = [
            Task(
                version=version,
                name=f"synthetic_task_{i + 1:02d}",
                category=category_of(i, n),
                budget_sec=BUDGETS[i % len(BUDGETS)],
                metric="runtime_ms",
                direction="lower",
                difficulty=rng.choice(["easy", "medium", "hard"]),
                optimization={"difficulty": rng.uniform(0.2, 0.9)},
            )
            for i in range(n)
        ]
        return Task.objects.bulk_create(rows)

    def make_entries(self, n: int, rng: random.Random) -> list[tuple[AgentModel, Harness, float]]:
        harnesses = [Harness.objects.get_or_create(name=name, version="synthetic")[0] for name in HARNESSES]
        pairs = []
        for i in range(n):
            model, _ = AgentModel.objects.get_or_create(
                name=f"synthetic-model-{i + 1:02d}",
                defaults={"display_name": f"Synthetic {i + 1:02d}", "open_weight": i % 3 == 2, "provider": "synthetic"},
            )
            pairs.append((model, harnesses[i % len(harnesses)], rng.uniform(0.15, 0.85)))
        return pairs

    def make_rollouts(self, version, tasks, pairs, k, rng: random.Random) -> list[Rollout]:
        now = timezone.now()
        rows = []
        for model, harness, skill in pairs:
            for task in tasks:
                difficulty = task.optimization["difficulty"]
                for index in range(k):
                    rows.append(self.rollout(version, task, model, harness, skill, difficulty, index, now, rng))
        created = []
        for start in range(0, len(rows), BATCH):
            created.extend(Rollout.objects.bulk_create(rows[start : start + BATCH]))
        return created

    def rollout(self, version, task, model, harness, skill, difficulty, index, now, rng) -> Rollout:
        budget = task.budget_sec
        agent_sec = budget * rng.uniform(0.4, 1.0)
        started = now - timedelta(days=rng.uniform(1, 60))
        failed = rng.random() < 0.12 + 0.2 * difficulty * (1 - skill)
        reward = 0.0 if failed else max(0.0, min(1.0, rng.gauss(skill * (1.2 - difficulty), 0.15)))
        infra = rng.random() < 0.02
        n_calls = 0 if failed else rng.randint(3, 30)
        curve, best = [], 0.0
        for call in range(n_calls):
            t = agent_sec * (call + 1) / (n_calls + 1) * rng.uniform(0.8, 1.0)
            score = reward * rng.uniform(0.3, 1.0) if call < n_calls - 1 else reward
            improved = score > best
            best = max(best, score)
            curve.append(
                {"step_id": call * 5 + 2, "t": round(t, 1), "metric": round(100 * (1 - score), 3), "score": score,
                 "best_metric": round(100 * (1 - best), 3), "best_score": best, "improved": improved}
            )
        curve.sort(key=lambda p: p["t"])
        tokens_in = int(rng.uniform(2e5, 4e6) * (agent_sec / 7200))
        rollout = Rollout(
            task=task,
            model=model,
            harness=harness,
            trial_name=f"synthetic-{version.name}-{model.name}-{task.name}-{index}",
            index=index,
            infra_error=infra,
            reward=None if infra else reward,
            started_at=started,
            finished_at=started + timedelta(seconds=agent_sec + 600),
            agent_started_at=started + timedelta(seconds=300),
            agent_finished_at=started + timedelta(seconds=300 + agent_sec),
            n_input_tokens=tokens_in,
            n_output_tokens=int(tokens_in * rng.uniform(0.01, 0.05)),
            cost_usd=None if model.open_weight else round(tokens_in * rng.uniform(1.5, 6) / 1e6, 4),
            n_benchmark_calls=n_calls,
            best_score=best if curve else None,
            curve=curve,
            outcome="infra_error" if infra else "zero" if reward == 0 else "scored",
            failure_cause="infrastructure_error" if infra else rng.choice(ZERO_CAUSES) if reward == 0 else "",
            verifier_fields={"reward": reward, "synthetic": True},
        )
        trajectories.set_imported(rollout, statuses.FINISHED)
        return rollout

    def make_steps(self, rollouts: list[Rollout], per_rollout: int, rng: random.Random) -> int:
        total = 0
        batch: list[Step] = []
        messages: dict[int, list[str]] = {}
        documents: dict[int, list[str]] = {}
        for rollout in rollouts:
            n = max(1, int(per_rollout * rng.uniform(0.8, 1.2)))
            rollout.n_steps = n
            agent_sec = (rollout.agent_finished_at - rollout.agent_started_at).total_seconds()
            calls = {point["step_id"] for point in rollout.curve}
            for position in range(n):
                benchmark = position + 1 in calls
                message = "Run the benchmark." if benchmark else f"Step {position}: inspect and edit the code."
                messages.setdefault(rollout.pk, []).append(message)
                documents.setdefault(rollout.pk, []).append(trajectories.search_words([message]))
                batch.append(
                    Step(
                        rollout=rollout,
                        position=position,
                        step_id=position + 1,
                        elapsed_sec=agent_sec * position / n,
                        source="agent" if position else "user",
                        message=message,
                        search_document=documents[rollout.pk][-1],
                        kinds=" benchmark " if benchmark else " edit " if position % 4 == 1 else " inspect ",
                        prompt_tokens=rng.randint(2000, 30000),
                        completion_tokens=rng.randint(50, 1500),
                    )
                )
                if len(batch) >= BATCH:
                    Step.objects.bulk_create(batch)
                    total += len(batch)
                    batch = []
        if batch:
            Step.objects.bulk_create(batch)
            total += len(batch)
        Rollout.objects.bulk_update(rollouts, ["n_steps"], batch_size=BATCH)
        # What search finds rollouts by: their steps' words (trajectories.search.document).
        RolloutDocument.objects.bulk_create(
            [RolloutDocument(rollout=rollout, words=trajectories.search_words(messages[rollout.pk])) for rollout in rollouts],
            batch_size=BATCH,
        )
        for rollout in rollouts:
            trajectories.store_step_chunks(rollout.pk, documents[rollout.pk])
        return total
