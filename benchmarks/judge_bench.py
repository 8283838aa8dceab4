"""What our LLM judge's analysis costs per rollout: tokens sent for a 139-step and a 20,000-step rollout.

    .venv/bin/python benchmarks/judge_bench.py [--budgets 8000,30000,100000] [--usd-in 3] [--usd-out 15]

A scratch SQLite database in a temporary folder gets the real tasks and the
shared opus trial (../shared/autolab/trials, 139 steps), and a 20,016-step
rollout made of that trial's steps repeated 144 times (as
long_rollouts_bench.py makes it). For each token budget the staff may set
(`analyze_rollouts --max-tokens`), printed per rollout: the estimated tokens
sent (instructions, rubric and compressed trajectory: what the judge is
billed for as input), the digest's level of detail, its steps shown / folded
/ only counted, the time to build it, and the cost at the prices given
(input tokens as sent, plus --answer-tokens of output; the defaults are an
example, not a provider's price list). No judge is called: the input is
the cost that grows with the rollout, and it is all computed here.

The target: the 20,000-step rollout's tokens sent stay within the budget
(the ratio printed is tokens / budget, at most 1.00).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SHARED = Path(os.environ.get("AUTOLAB_SHARED_DIR", ROOT.parent / "shared")) / "autolab"
OPUS = "opus4.6__2026-04-26__2TyoFTQ"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="8000,30000,100000", help="token budgets, comma-separated")
    parser.add_argument("--usd-in", type=float, default=3.0, help="example price, USD per million input tokens")
    parser.add_argument("--usd-out", type=float, default=15.0, help="example price, USD per million output tokens")
    parser.add_argument("--answer-tokens", type=int, default=1500, help="output tokens assumed per answer")
    args = parser.parse_args()
    if not (SHARED / "trials" / OPUS).is_dir():
        print(f"the shared opus trial is missing: {SHARED / 'trials' / OPUS}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="judge-bench-"))
    os.environ.pop("DATABASE_URL", None)  # a scratch SQLite file in `work`, whatever the shell says
    os.environ["AUTOLAB_DATA_DIR"] = str(work / "data")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "autolab_site.settings")
    try:
        return run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, work: Path) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    from explorer_bench import long_trial
    from tasks.services import import_tasks
    from trajectories.analysis.judge_rubric import load_rubric
    from trajectories.judge import prompt_for
    from trajectories.models import Rollout
    from trajectories.services import import_path

    call_command("migrate", verbosity=0, interactive=False)
    import_tasks(SHARED / "tasks", version="1.1")
    opus_dir = SHARED / "trials" / OPUS
    assert import_path(opus_dir).ok
    long_dir = long_trial(opus_dir, 144, work / "long" / f"long-x144__{OPUS}")
    assert import_path(long_dir).ok
    found = Rollout.objects.select_related("task").order_by("n_steps")
    rollouts = [("opus (shared trial)", found.first()), ("opus x144", found.last())]
    rubric = load_rubric()
    budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    print(f"judge input per rollout (default rubric, {len(rubric.criteria)} criteria; "
          f"example prices ${args.usd_in:g} / ${args.usd_out:g} per M tokens in / out, {args.answer_tokens} out)")
    print(f"{'rollout':<20} {'steps':>6} {'budget':>8} {'sent':>8} {'/budget':>8} {'level':<30} "
          f"{'shown':>6} {'folded':>6} {'counted':>7} {'build s':>8} {'cost $':>8}")
    worst = 0.0
    for name, rollout in rollouts:
        for budget in budgets:
            started = time.perf_counter()
            _, digest, sent = prompt_for(rollout, rubric, budget)
            took = time.perf_counter() - started
            cost = (sent * args.usd_in + args.answer_tokens * args.usd_out) / 1e6
            worst = max(worst, sent / budget)
            print(f"{name:<20} {rollout.n_steps:>6} {budget:>8} {sent:>8} {sent / budget:>8.2f} {digest.level:<30} "
                  f"{digest.shown:>6} {digest.folded:>6} {digest.omitted:>7} {took:>8.2f} {cost:>8.4f}")
    print(f"largest tokens sent / budget: {worst:.2f} (target at most 1.00)")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
