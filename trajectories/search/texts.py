"""The texts of a rollout beyond its steps that search finds: its verifier's output and its trial's log.

A run's failure is often said only there: the verifier printed "ERROR: No
LoRA file found", the harness logged a lost sandbox. Each is a RolloutText
row per rollout, written when what it comes from is stored: the verifier's
stdout, reward.json's fields and its other JSON files at import and at each
regrade; the trial log when the trial's files are copied to the artifact
storage (at import, and when a run ends). Its text is masked (what search
shows of it is a snippet) and cut to TEXT_CHARS, a quarter from its start
and the rest from its end, where a log says how the run ended. Its words
are a step's (trajectories.search.document), so the word stage finds a text
as it finds a step (trajectories.search.query).
"""
from __future__ import annotations

from typing import Any

from django.db import connection

from autolab_site.masking import mask_text
from trajectories.models import Rollout, RolloutText
from trajectories.reading import trial_tabs
from trajectories.search.document import document, flatten
from trajectories.storing import artifacts

VERIFIER = "verifier"
LOG = "log"
KINDS = (VERIFIER, LOG)
# What of a text is kept: at most this many characters, a quarter of them from its start.
TEXT_CHARS = 128 * 1024
CUT = "\n[...]\n"  # ASCII: "…" would be a word


def verifier_text(stdout: str, fields: dict[str, Any], outputs: dict[str, Any]) -> str:
    """The verifier's stdout, then reward.json's fields and its other files, a "name: value" a line."""
    return "\n".join(part for part in (stdout or "", _described(fields), _described(outputs)) if part)


def _described(value: Any) -> str:
    if isinstance(value, dict):
        return "\n".join(f"{key}: {_described(item)}" for key, item in value.items())
    return flatten(value)


def cut(text: str, limit: int = TEXT_CHARS) -> str:
    """`text`, or its first quarter of `limit` and its last three quarters, marked where cut."""
    if len(text) <= limit:
        return text
    head = limit // 4
    return text[:head] + CUT + text[len(text) - (limit - head):]


def store_text(rollout_id: int, kind: str, text: str) -> None:
    """Store a rollout's text of this kind with its words (replacing the last), or remove it when empty.

    One statement with nothing read back, as the importer's other search rows are written.
    """
    table = connection.ops.quote_name(RolloutText._meta.db_table)
    with connection.cursor() as cursor:
        if not text:
            cursor.execute(f"DELETE FROM {table} WHERE rollout_id = %s AND kind = %s", [rollout_id, kind])
            return
        cursor.execute(
            f"INSERT INTO {table} (rollout_id, kind, text, words) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (rollout_id, kind) DO UPDATE SET text = EXCLUDED.text, words = EXCLUDED.words",
            [rollout_id, kind, text, document([text])],
        )


def index_verifier(rollout: Rollout) -> None:
    """Index the rollout's verifier output as stored on it (after an import or a regrade wrote it)."""
    text = verifier_text(rollout.verifier_stdout, rollout.verifier_fields, rollout.verifier_outputs)
    store_text(rollout.pk, VERIFIER, mask_text(cut(text)))


def index_log(rollout: Rollout) -> None:
    """Index the trial log among the rollout's stored files (masked as its Log tab shows it), if it has one."""
    path = trial_tabs.trial_log_path(entry["path"] for entry in rollout.artifacts or [] if isinstance(entry, dict))
    store_text(rollout.pk, LOG, _stored_log(rollout, path) if path else "")


def _stored_log(rollout: Rollout, path: str) -> str:
    entry = artifacts.listed(rollout, path)
    head = artifacts.shown_head(rollout, path, TEXT_CHARS // 4)
    if entry is None or head is None or head[0] is None:
        return ""  # gone, or binary
    if entry.size <= TEXT_CHARS // 4 and not entry.cut:
        return head[0]
    tail = artifacts.shown_tail(rollout, path, TEXT_CHARS - TEXT_CHARS // 4)
    if tail is None or not tail[1]:
        return tail[0] if tail is not None else head[0]  # the tail is the whole file
    return head[0] + CUT + tail[0]
