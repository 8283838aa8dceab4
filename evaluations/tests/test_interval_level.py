"""The intervals' level is 95%: pinned on data whose percentiles are known, through every place that uses it."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from evaluations.figures import aggregation as agg
from evaluations.figures import ranking

from evaluations.tests.board_factories import CATEGORIES, SCORES, build_boards, hand_table
from evaluations.tests.bootstrap_reference import bootstrap_tasks, rollout_resamples


def test_intervals_take_the_2_5_and_97_5_percentiles():
    # The p-th percentile of 0, 1, ..., 1000 is 10 p: 25 and 975, where a 90% interval would give 50 and 950.
    samples = np.arange(1001.0)
    assert agg.percentile_interval(samples).tolist() == [25.0, 975.0]
    # Along an axis, as the board asks for one interval per entry.
    both = np.vstack([samples, 2 * samples])
    assert agg.percentile_interval(both, axis=1).T.tolist() == [[25.0, 975.0], [50.0, 1950.0]]


def test_board_intervals_are_those_percentiles_of_the_paired_replicates():
    """Avg@k's interval is the 2.5th and 97.5th percentiles of the entry's bootstrap Avg@k (Best@k's likewise)."""
    table = agg.ScoreTable(entries=["A", "B", "C"], tasks=["t1", "t2", "t3", "t4"], scores=SCORES, categories=CATEGORIES)
    n, seed = 400, 7
    figures = agg.scope_figures(table, comparison={"A", "B", "C"}, n_resamples=n, seed=seed)
    rollouts = rollout_resamples(table, n, seed)
    positions = np.arange(len(table.tasks))
    categories = [CATEGORIES[t] for t in table.tasks]  # the clustered bootstrap draws tasks within each
    means, bests = bootstrap_tasks(rollouts, positions, np.random.default_rng((seed, 1)), categories)
    for i, entry in enumerate(table.entries):
        assert figures[entry].avg_ci == tuple(np.percentile(means[i].mean(axis=-1), [2.5, 97.5]))
        assert figures[entry].best_ci == tuple(np.percentile(bests[i].mean(axis=-1), [2.5, 97.5]))


def test_rank_ranges_cover_95_percent_of_the_replicates():
    # Entry 0 is second in 4% of 1000 replicates: inside the top 2.5% tail's reach (95% keeps it), outside 90%'s.
    first = np.full(1000, 0.5)
    second = np.full(1000, 0.4)
    second[:40] = 0.6
    assert ranking.rank_ranges(np.vstack([first, second])) == [(1, 2), (1, 2)]


ROOT = Path(__file__).resolve().parents[2]
OWNER = ROOT / "evaluations" / "figures" / "ranking.py"


def level_written(line: str) -> bool:
    """A level written out: "95%", "95 %", the percentiles 2.5 and 97.5, the fraction 0.95 (or the constant's own)."""
    level = ranking.INTERVAL_PERCENT
    return bool(re.search(rf"(?<![\d.])(?:(?:95|{level})\s?%|97\.5|2\.5\s?%|2\.5-|0\.95(?!\d))", line))


def places_that_print_the_board() -> list[Path]:
    evaluations = ROOT / "evaluations"
    files = [p for p in evaluations.rglob("*.py") if "tests" not in p.parts and "migrations" not in p.parts]
    files += list((evaluations / "templates").rglob("*.html")) + list((ROOT / "tasks" / "templates").rglob("*.html"))
    files += [ROOT / "static" / "js" / name for name in ("leaderboard.js", "time_curves.js", "charts.js")]
    return [p for p in files if p != OWNER]


def test_level_written_finds_the_ways_of_writing_it():
    assert all(map(level_written, ["in 95% of", "95 % bootstrap", "the 2.5-97.5 range", "[2.5, 97.5]", "level=0.95"]))
    assert not any(map(level_written, ["195%", "0.955", "12.5%", "2.50 KB", "{% interval_level %}"]))


def test_no_second_writer_of_the_level():
    """Every page, API text and chart that states the level reads ranking.INTERVAL_PERCENT."""
    found = []
    for path in places_that_print_the_board():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if level_written(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert found == []


@pytest.mark.django_db
def test_pages_and_the_api_print_the_constants_level(client):
    build_boards(hand_table()["version"])
    level = f"{ranking.INTERVAL_PERCENT}%"
    page = client.get("/").content.decode()
    assert f"Intervals are {level} bootstrap intervals" in page
    assert f'data-interval="{level}"' in page  # the chart's legend (leaderboard.js)
    assert f"by Avg@k in {level} of the bootstrap resamples" in page  # a rank's range
    assert f"Dominance, {level} intervals," in client.get("/api/").content.decode()
    definitions = client.get("/api/v1/leaderboard/").json()["definitions"]
    assert definitions["ci"].startswith(f"{level} percentile bootstrap")
    assert f"Avg@k {level} interval" in definitions["rank"]
    low, high = ranking.INTERVAL_PERCENTILES
    assert definitions["rank_range"].startswith(f"The {low:g}-{high:g}% range")


def test_rank_ranges_of_another_comparison_set_are_worked_out_from_its_replicates():
    """A bootstrap kept for {A, B, C} asked for {A, B}'s figures ranks the two among themselves."""
    table = agg.ScoreTable(entries=["A", "B", "C"], tasks=["t1", "t2", "t3", "t4"], scores=SCORES, categories=CATEGORIES)
    boot = agg.build_bootstrap(table, {"A", "B", "C"}, 400, 7)
    figures = agg.figures_from(boot, table, {"A", "B"})
    scope = boot.scopes[None]
    expected = ranking.rank_ranges(np.stack([scope.avg["A"], scope.avg["B"]]))
    assert [figures["A"].rank_range, figures["B"].rank_range] == expected
    assert figures["C"].rank_range is None


@pytest.mark.django_db
def test_the_model_page_and_the_api_page_name_the_level_of_their_intervals(client):
    """The model page showed "0.050–0.675" under Avg@k with no level; the CSV's *_ci_* columns had none either."""
    build_boards(hand_table()["version"])
    level = f"{ranking.INTERVAL_PERCENT}%"
    model = client.get("/models/model-a/").content.decode()
    entries = model.split('id="model-entries"', 1)[1].split("</thead>", 1)[0]
    assert f"Avg@k <span class=\"ci-level\">({level} interval)</span>" in entries
    docs = client.get("/api/").content.decode()
    assert f"<code>avg_ci_low</code> and <code>avg_ci_high</code> (and <code>dominance_ci_low</code>, <code>dominance_ci_high</code>) are the ends of the {level} interval" in docs
    assert f"ends of its {level} intervals" in client.get("/").content.decode()  # the CSV link's hover


def interval_texts(html: str) -> list[str]:
    return re.findall(r'<span class="ci">([^<]+)</span>', html)


@pytest.mark.django_db
def test_every_page_rounds_an_interval_as_its_figures(client):
    """One rule: the leaderboard rounded intervals to 2 decimals (0.3272 and 0.3267 both "0.33", two entries
    ranked apart read as touching) where the model page printed 3."""
    from evaluations.templatetags.board import SCORE_DECIMALS, interval

    assert interval((0.3272, 0.47)) == "0.327–0.470" and interval((0.22, 0.3267)) == "0.220–0.327"
    build_boards(hand_table()["version"])
    board = interval_texts(client.get("/").content.decode().split('id="leaderboard-table"', 1)[1])
    model = interval_texts(client.get("/models/model-a/").content.decode())
    shapes = {re.sub(r"\d", "9", text) for text in board + model}
    assert board and model and shapes == {"9." + "9" * SCORE_DECIMALS + "–9." + "9" * SCORE_DECIMALS}
