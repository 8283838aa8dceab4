"""One resampling scheme behind every interval: evaluations.figures.bootstrap's clustered bootstrap.

A second bootstrap (its own random draws, its own percentile interval)
would give intervals that disagree with the board's for the same data. So
no project module other than the owner makes random draws of the numpy or
scipy kind, or resamples with a library's helper; a module that needs
replicates (the board, the paired differences) asks the owner for them.
Read from the source, as the other guard tests do.
"""
from __future__ import annotations

import re
from pathlib import Path

from tests.test_import_graph import ROOT, project_modules

OWNER = ROOT / "evaluations" / "figures" / "bootstrap.py"
# Random draws that are not resampling: synthetic demo data (Python's random module, seeded).
NOT_RESAMPLING = {ROOT / "evaluations" / "management" / "commands" / "generate_synthetic.py"}
DRAWS = re.compile(
    r"default_rng|(?:np|numpy)\.random|\.integers\(|random\.choices|stats\.bootstrap|utils\.resample|"
    r"\bresample\(|def percentile_interval|scipy\.stats import .*bootstrap"
)


def resampling_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if DRAWS.search(line) and not line.strip().startswith("#")]


def test_the_guard_sees_a_second_bootstrap():
    """The rule can fail: a module that draws its own replicates is caught, however it writes them."""
    second = (
        "import numpy as np\n"
        "rng = np.random.default_rng(1)\n"
        "picks = rng.integers(0, 5, size=(1000, 5))\n"
        "from scipy.stats import bootstrap\nres = stats.bootstrap((x,), np.mean)\n"
        "def percentile_interval(x):\n    return x\n"
    )
    assert len(resampling_lines(second)) == 5
    assert resampling_lines("from evaluations.figures import bootstrap as bs\nbs.percentile_interval(x)\n") == []


def test_no_second_bootstrap():
    found = []
    for path in project_modules().values():
        if path == OWNER or path in NOT_RESAMPLING:
            continue
        found += [f"{path.relative_to(ROOT)}: {line[:120]}" for line in resampling_lines(path.read_text())]
    assert found == [], "draw replicates through evaluations.figures.bootstrap, the one scheme"


def test_the_owner_is_where_the_draws_are():
    assert resampling_lines(OWNER.read_text()), "the guard's patterns no longer match the scheme's own draws"


def test_the_paired_differences_use_the_owners_draws():
    text = (ROOT / "evaluations" / "figures" / "paired.py").read_text()
    assert "bs.clustered_task_draws" in text and "bs.entry_resamples" in text
    assert str(Path("evaluations/figures/paired.py")) in {str(p.relative_to(ROOT)) for p in project_modules().values()}
