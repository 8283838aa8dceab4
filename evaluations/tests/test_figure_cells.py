"""A leaderboard row's figure cells (templatetags.board.figure_cells): the markup the row template had, made in Python."""
from __future__ import annotations

import dataclasses

import pytest
from django.template import Context, Template

from evaluations.figures import aggregation as agg
from evaluations.templatetags.board import figure_cells

FIGURES = agg.Figures(
    avg=0.41234, best=0.9, avg_ci=(0.3, 0.5), best_ci=(0.8, 1.0), dominance=None, dominance_ci=None,
    rank=2, rank_range=(1, 3), n_tasks=3, n_tasks_total=4, n_rollouts=9,
)

# The cells as the row template wrote them in a loop, before they moved into the tag: its output is the reference
# (with the shading by value since; bold is now the best of a column, no longer the scope's Avg@k).
LOOP = Template(
    "{% load board %}{% for g in groups %}"
    '<td class="num group-start{% if not forloop.first %} extra{% endif %}{{ g.avg|shade }}" data-value="{{ g.avg|sortval }}">'
    "{{ g.avg|score }}"
    '<span class="ci">{{ g.avg_ci|interval }}</span></td>'
    '<td class="num{% if not forloop.first %} extra{% endif %}{{ g.best|shade }}" data-value="{{ g.best|sortval }}">{{ g.best|score }}'
    '<span class="ci">{{ g.best_ci|interval }}</span></td>'
    '<td class="num{% if not forloop.first %} extra{% endif %}{{ g.dominance|shade }}" data-value="{{ g.dominance|sortval }}">'
    '{{ g.dominance|score }}<span class="ci">{{ g.dominance_ci|interval }}</span></td>{% endfor %}'
)


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize(
    "figures",
    [FIGURES, dataclasses.replace(FIGURES, dominance=0.5, dominance_ci=(0.25, 0.75), avg=0.0), None],
)
def test_the_cells_are_the_templates(first, figures):
    groups = [figures, figures] if not first else [figures]
    expected = LOOP.render(Context({"groups": groups}))
    if not first:
        expected = expected[len(LOOP.render(Context({"groups": [figures]}))):]
    assert figure_cells(figures, first) == expected


def test_what_the_cells_show():
    html = figure_cells(FIGURES, True)
    assert 'class="num group-start shade-4" data-value="0.41234">0.412<span class="ci">0.300–0.500</span>' in html
    assert 'class="num shade-9" data-value="0.9">0.900' in html  # shaded by value: 0.9 green, 0.41 faint rose
    assert 'data-value="0.41234"' in html and 'data-value=""' in html  # no Dominance: an empty sort value
    assert "—" in html and " extra" not in html
    assert html.count(' extra"') == 0 and figure_cells(FIGURES, False).count(" extra") == 3


def test_the_best_and_second_of_a_column_are_marked():
    """The paper's table marks each column's best bold and its second underlined."""
    html = figure_cells(FIGURES, True, {"avg": "best", "best": "second"})
    assert '<strong class="best" title="the best of this column among the compared entries">0.412</strong>' in html
    assert '<span class="second" title="the second best of this column among the compared entries">0.900</span>' in html
