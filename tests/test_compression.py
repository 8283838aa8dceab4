"""Pages and API answers are gzipped for clients that accept it (GZipMiddleware); static files are WhiteNoise's."""
from __future__ import annotations

import gzip

import pytest
from django.urls import reverse

from trajectories.tests import factories

pytestmark = pytest.mark.django_db


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture
def rollout():
    rollout = factories.make_rollout()
    for step_id in range(1, 40):
        factories.add_step(rollout, step_id, message=f"Step {step_id}: profile the hot loop.", commands=["./bench\n"],
                           outputs=[f"runtime: {100 - step_id} ms\n" * 20])
    return rollout


def test_a_rollout_page_is_gzipped_for_a_browser_and_plain_for_others(client, rollout):
    url = reverse("trajectories:rollout_detail", args=[rollout.pk])
    plain = client.get(url)
    packed = client.get(url, headers={"accept-encoding": "gzip, deflate, br"})
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    html = gzip.decompress(packed.content)
    # The same page (its CSP nonce and CSRF mask differ per response), in a fraction of the bytes.
    assert b"Step 39: profile the hot loop." in html and abs(len(html) - len(plain.content)) < 200
    assert len(packed.content) < len(plain.content) / 4


def test_a_csv_export_streams_gzipped_and_inflates_to_the_same_bytes(client, rollout):
    plain = client.get("/api/v1/rollouts.csv")
    packed = client.get("/api/v1/rollouts.csv", headers={"accept-encoding": "gzip"})
    assert packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(body(packed)) == body(plain)
