"""python manage.py compare_entries --version V [--entries KEY ...] [--resamples B] [--seed S]

Paired differences of Avg@k between every two entries of a version's board
(the rollouts' comparison set and the published main set, or the entries
named), over the tasks both have, overall and per category, with their
intervals from the paired clustered bootstrap, P(first ahead), the
Holm-corrected p-values of the per-category claims and the rollouts per task
needed to separate the pair; then each entry's rank range, the ranks
consistent with every paired interval (evaluations.figures.paired says how).
"""
from __future__ import annotations

from django.core.management.base import CommandError

from autolab_site.commands import BenchmarkCommand
from evaluations.boards import pairs as board_pairs
from evaluations.boards import serving, visible_sealed
from evaluations.figures import visible
from evaluations.figures import aggregation as agg
from evaluations.figures.paired import ALPHA, METHOD, MIN_TASKS
from evaluations.figures.ranking import INTERVAL_PERCENT
from tasks.models import BenchmarkVersion
from trajectories.models import Rollout
from trajectories.services import SEALED_BELOW_VISIBLE


def signed(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{0.0 if abs(value) < 1e-12 else value:+.4f}"  # a difference of exactly equal scores prints +0.0000


def plain(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


class Command(BenchmarkCommand):
    help = "Print the paired differences of Avg@k between a version's entries, and the rank ranges they allow."

    def add_arguments(self, parser):
        parser.add_argument("--version", required=True, help="the benchmark version")
        parser.add_argument("--entries", nargs="+", help="entry keys (a published one as published:KEY); default: the comparison set and the published main set")
        parser.add_argument("--resamples", type=int, default=agg.DEFAULT_RESAMPLES)
        parser.add_argument("--seed", type=int, default=agg.DEFAULT_SEED)
        parser.add_argument("--rollouts", action="store_true", help="list every rollout's visible and sealed scores")

    def handle(self, *args, **options):
        version = BenchmarkVersion.objects.filter(name=options["version"]).first()
        if version is None:
            raise CommandError(f"no benchmark version {options['version']!r}")
        # A command may build: the board as the boards worker would store it (never a page's work).
        board = serving.build(version)
        known = board_pairs.comparables(board)
        entries = options["entries"] or board_pairs.default_entries(board)
        unknown = [e for e in entries if e not in known]
        if unknown:
            raise CommandError(f"no entry {', '.join(unknown)} with a counted score on {version}; known: {', '.join(known)}")
        if len(entries) < 2:
            raise CommandError(f"{version}: fewer than two entries to compare ({', '.join(entries) or 'none'})")
        result = board_pairs.compare_all(board, entries, options["resamples"], options["seed"])
        names = {None: "all tasks", **{c: c for c in board.categories}}
        tasks = {None: len(board.tasks), **{c: sum(t.category == c for t in board.tasks) for c in board.categories}}
        out = self.stdout.write
        out(
            f"{version}: paired differences of Avg@k over the tasks both entries have; {INTERVAL_PERCENT}% intervals "
            f"from the {METHOD} (tasks redrawn within each category, then rollouts within each drawn task; "
            f"{result.n_resamples} resamples, seed {result.seed}). Per-category p-values Holm-corrected over the "
            f"categories of each pair (in the rank ranges: over the category's pairs); separated at {ALPHA:g}."
        )
        for label, key in ((known[e].label, e) for e in entries):
            out(f"  [{entries.index(key) + 1}] {key}: {label} (Avg@k {plain(known[key].avg, 4)})")
        header = f"{'pair':<8} {'scope':<24} {'tasks':>5} {'difference':>11} {f'{INTERVAL_PERCENT}% interval':>21} {'P(first ahead)':>14} {'p':>6} {'p Holm':>6} {'sep':>3} {'runs/task':>9}"
        out("")
        out(header)
        for x, a in enumerate(entries):
            for y, b in enumerate(entries[x + 1:], x + 1):
                for scope in result.scopes:
                    d = result.pairs[scope][(a, b)]
                    ci = "–" if d.ci is None else f"[{signed(d.ci[0])}, {signed(d.ci[1])}]"
                    out(
                        f"{f'{x + 1}-{y + 1}':<8} {names[scope]:<24} {d.n_tasks:>5} {signed(d.difference):>11} {ci:>21} "
                        f"{plain(d.p_ahead):>14} {plain(d.p_value):>6} {plain(d.p_holm):>6} {'yes' if d.separated else 'no':>3} "
                        f"{'–' if d.runs_needed is None else d.runs_needed:>9}"
                    )
        out("")
        out("Rank ranges (ranks consistent with every paired interval; per category with Holm over its pairs):")
        out(f"{'entry':<8} " + " ".join(f"{f'{names[s]} ({tasks[s]})':>24}" for s in result.scopes))
        for x, e in enumerate(entries):
            cells = [f"{low}-{high}" for low, high in (result.ranks[s][e] for s in result.scopes)]
            out(f"{f'[{x + 1}]':<8} " + " ".join(f"{c:>24}" for c in cells))
        out("runs/task: rollouts per task each entry would need to separate the pair at the current variance "
            "(normal approximation); – where the tasks' own spread is too wide (more tasks, not runs), there is no difference, "
            f"or the pair has fewer than {MIN_TASKS} tasks in common (nothing is claimed on those).")
        self.visible_against_sealed(board, [e for e in entries if not known[e].published], known, result, options["rollouts"])

    def visible_against_sealed(self, board, entries, known, result, rollouts: bool) -> None:
        """Per entry the mean gap between the best score its agent saw and the sealed grade (figures.visible)."""
        out = self.stdout.write
        gaps = visible_sealed.rollout_gaps(board)
        categories = {t.id: t.category for t in board.tasks}
        names = {t.id: t.name for t in board.tasks}
        out("")
        out(f"Visible against sealed: the best score of the agent's benchmark calls (anchored) minus the verifier's "
            f"counted reward; mean over tasks with a benchmark call, {INTERVAL_PERCENT}% interval from the clustered bootstrap.")
        # The behaviour flag stored by the failure rules: above by more than the grader's noise (the task's or the default).
        flagged = set(Rollout.objects.filter(
            pk__in=[r.rollout_id for rows in gaps.values() for r in rows],
            behaviour_flags__icontains=f'"{SEALED_BELOW_VISIBLE}"',
        ).values_list("pk", flat=True))
        out(f"{'entry':<8} {'rollouts':>8} {'tasks':>5} {'mean gap':>9} {f'{INTERVAL_PERCENT}% interval':>21} {'above sealed':>12} "
            f"{'beyond noise':>12}")
        for x, e in enumerate(entries):
            mine = gaps.get(e, [])
            g = visible.entry_gap(e, mine, categories, 0.0, result.n_resamples, result.seed)
            ci = "–" if g.ci is None else f"[{signed(g.ci[0])}, {signed(g.ci[1])}]"
            beyond = sum(1 for r in mine if r.rollout_id in flagged)
            out(f"{f'[{result.entries.index(e) + 1}]':<8} {g.n_rollouts:>8} {g.n_tasks:>5} {signed(g.mean_gap):>9} {ci:>21} "
                f"{g.n_above:>12} {beyond:>12}")
            if rollouts:
                for r in mine:
                    mark = f" [{SEALED_BELOW_VISIBLE}]" if r.rollout_id in flagged else ""
                    out(f"    rollout {r.rollout_id} on {names[r.task]}: visible best {plain(r.visible_best)}, last "
                        f"{plain(r.visible_last)}, sealed {plain(r.sealed)}, gap {signed(r.gap)}{mark}")
        out("above sealed: rollouts whose visible best is above the sealed grade; beyond noise: those flagged "
            f"{SEALED_BELOW_VISIBLE} (above by more than the grader's noise; manage.py classify_failures sets it on stored rollouts).")
