"""Raw terminal bytes (ESC, BEL, ...) of messages and reasoning never reach the HTML.

Observations were always cleaned (trajectories.ansi); a message or reasoning
text holding `\\x1b[31m` or `\\x07` reached the page escaped but raw, shown as
garbage and ringing nothing. They go through the same cleaning.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from . import factories

pytestmark = pytest.mark.django_db

RAW = ("\x1b", "\x07", "\x08", "\x00")


def test_rollout_page_cleans_messages_and_reasoning(client):
    rollout = factories.make_rollout()
    factories.add_step(
        rollout, 1,
        message="I will \x1b[31mrun\x1b[0m the benchmark\x07 now\x1b]0;title\x07.",
        reasoning="thinking\x1b[2K\x08 hard\x07",
        commands=["ls\n"], outputs=["ok"],
    )
    html = client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])).content.decode()
    assert not [c for c in RAW if c in html]
    assert '<span class="ansi-fg-red">run</span> the benchmark now.' in html
    assert "thinking hard" in html


def test_compare_cleans_message_heads(client):
    a = factories.make_explored_rollout()
    b = factories.make_explored_rollout(task=a.task)
    factories.add_step(a, 99, message="done\x1b[1m!\x07", commands=["ls\n"], outputs=["ok"])
    html = client.get(reverse("trajectories:compare"), {"a": a.pk, "b": b.pk}).content.decode()
    assert not [c for c in RAW if c in html]
    assert "done" in html
