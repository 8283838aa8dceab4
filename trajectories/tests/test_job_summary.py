"""A set of trials summed up as Harbor's job view does (Django-free), with its table of cases."""
import pytest

from trajectories.analysis.job_summary import Bin, TrialFacts, compact_count, dollars, histogram, hours, summarise


def done(reward=None, **fields) -> TrialFacts:
    return TrialFacts(ended=True, reward=reward, **fields)


CASES = [
    # (trials, the line, mean reward)
    ([], "0/0 finished, 0 errors", None),
    ([done(0.5, input_tokens=1000, output_tokens=200, cost_usd=1.25, seconds=5400)],
     "1/1 finished, 0 errors, 1.2 k tokens, $1.25, 1.5 h", 0.5),
    # A running trial is not finished; an errored one is finished and an error; unknown figures are left out, not 0.
    ([done(0.0, errored=True), TrialFacts(ended=False), done(1.0)], "2/3 finished, 1 error", 0.5),
    # A cancelled trial (stopped with an exception) is counted as cancelled: not finished, not an error.
    ([done(0.5), done(1.0), done(errored=True, cancelled=True)], "2/3 finished, 0 errors, 1 cancelled", 0.75),
    # 36 trials of two hours, 400 k tokens and $5.90 each, two with an exception: Harbor's example line.
    ([done(0.1 * (i % 10), errored=i < 2, input_tokens=390_000, output_tokens=13_000, cost_usd=5.9, seconds=7100)
      for i in range(36)], "36/36 finished, 2 errors, 14.5 M tokens, $212, 71 h", 15 / 36),
]


@pytest.mark.parametrize("trials, line, mean", CASES)
def test_a_job_in_one_line(trials, line, mean):
    summary = summarise(trials)
    assert summary.text == line
    assert summary.mean_reward == pytest.approx(mean) if mean is not None else summary.mean_reward is None


HISTOGRAMS = [
    ([], []),
    ([0.0, 0.0, 1.0], [2] + [0] * 8 + [1]),  # 1.0 in the last bar
    ([0.05, 0.15, 0.95, 0.999], [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]),
]


@pytest.mark.parametrize("rewards, counts", HISTOGRAMS)
def test_the_reward_histogram(rewards, counts):
    assert [b.count for b in histogram(rewards)] == counts


def test_rewards_outside_zero_to_one_widen_the_bars():
    bars = histogram([-1.0, 3.0], bins=4)
    assert bars == (Bin(-1.0, 0.0, 1), Bin(0.0, 1.0, 0), Bin(1.0, 2.0, 0), Bin(2.0, 3.0, 1))


@pytest.mark.parametrize("value, text", [(950, "950"), (12_345, "12.3 k"), (14_500_000, "14.5 M"), (2_100_000_000, "2.1 G")])
def test_compact_counts(value, text):
    assert compact_count(value) == text


@pytest.mark.parametrize("value, text", [(212.4, "$212"), (1234.0, "$1,234"), (12.4, "$12.40"), (0.0, "$0.00")])
def test_dollars(value, text):
    assert dollars(value) == text


@pytest.mark.parametrize("seconds, text", [(71 * 3600, "71 h"), (5400, "1.5 h"), (2520, "42 min")])
def test_hours(seconds, text):
    assert hours(seconds) == text
