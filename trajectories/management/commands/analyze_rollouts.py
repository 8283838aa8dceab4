"""Read rollouts with an LLM judge against a rubric (default: the failed rollouts, the default rubric)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from trajectories import judge as judging
from trajectories.analysis.judge_rubric import RubricError


class Command(BaseCommand):
    help = (
        "Analyse rollouts with an LLM judge (an Agent model): a summary and one check per rubric criterion, "
        "stored as the rollout's review. Already-read rollouts are kept unless --replace."
    )

    def add_arguments(self, parser):
        parser.add_argument("rollout_ids", nargs="*", type=int, metavar="ROLLOUT_ID", help="default: every failed rollout")
        parser.add_argument("--judge", help="the judge's Agent model name (default: AUTOLAB_JUDGE_MODEL, or the one model marked as a judge)")
        parser.add_argument("--rubric", help="a rubric TOML file ([[criteria]] name, description, guidance); default: the built-in one")
        parser.add_argument(
            "--max-tokens", type=int, default=judging.DEFAULT_BUDGET,
            help=f"tokens of trajectory and rubric sent per rollout (default {judging.DEFAULT_BUDGET})",
        )
        parser.add_argument("--replace", action="store_true", help="read again rollouts this judge already read with this rubric")

    def handle(self, *args, **options):
        budget = options["max_tokens"]
        if not judging.MIN_BUDGET <= budget <= judging.MAX_BUDGET:
            raise CommandError(f"--max-tokens must be between {judging.MIN_BUDGET} and {judging.MAX_BUDGET}")
        counts = {judging.DONE: 0, judging.CACHED: 0, judging.FAILED: 0}

        def report(result: judging.RolloutResult) -> None:
            counts[result.state] += 1
            sent = f", {result.tokens_sent} tokens sent" if result.tokens_sent else ""
            self.stdout.write(f"rollout {result.rollout_id}: {result.state}{sent}" + (f" ({result.detail})" if result.detail else ""))

        try:
            results = judging.analyze_rollouts(
                options["rollout_ids"] or None, judge=options["judge"], rubric_path=options["rubric"],
                budget=budget, replace=options["replace"], on_result=report,
            )
        except (judging.JudgeError, RubricError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{len(results)} rollout{'s' if len(results) != 1 else ''}: {counts['done']} read, "
            f"{counts['cached']} already read, {counts['failed']} failed"
        )
        if counts[judging.FAILED] and not counts[judging.DONE] and not counts[judging.CACHED]:
            # Nothing asked for was read: say so to a script or CI, not only on screen.
            raise CommandError(f"every reading failed ({counts[judging.FAILED]}); the reasons are on the lines above",
                               returncode=1)
