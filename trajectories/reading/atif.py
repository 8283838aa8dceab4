"""Reading ATIF trajectory files (Agent Trajectory Interchange Format, v1.0-v1.8).

Harbor's pydantic `Trajectory` model is the authority on what a valid file
is, so every file is validated with it first. Files in the wild are not all
valid (older producers, hand-made fixtures, a live file caught mid-write by a
lenient reader), and a trajectory that fails validation is still worth
showing: the conversion below is tolerant, never raises on odd content, and
the validation errors travel with the result as short warnings.

Only two things are refused: text that is not JSON, and a document without a
list of steps. Both raise `AtifError` naming the file.

A file is decoded once (reading.json_data, which also makes values
storable); Harbor validates the decoded data and the conversion reads that
same data, so valid and invalid files take the one path and give the same
fields either way.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autolab_site.gc_pause import gc_paused
from tasks.lib.numbers import as_float

from trajectories.reading.json_data import (
    JsonFileError,
    clean_json,
    clean_storable_json,
    clean_storable_text,
    clean_text,
    decode_tolerantly,
    parse_timestamp,
    read_json,
    storable_int,
)
from trajectories.reading.parsed import ParsedObservation, ParsedStep, ParsedToolCall, ParsedTrajectory

MAX_WARNINGS = 20
MAX_WARNING_LENGTH = 200
# Subagents may embed subagents; a hostile file must not recurse forever.
MAX_SUBAGENT_DEPTH = 5

# Field lengths of trajectories.models, so that PostgreSQL never refuses a value.
SOURCE_LENGTH = 20
NAME_LENGTH = 200
SCHEMA_VERSION_LENGTH = 30

# Step keys this module maps to ParsedStep fields; anything else goes to extra.
KNOWN_STEP_KEYS = frozenset(
    {
        "step_id",
        "timestamp",
        "source",
        "model_name",
        "message",
        "reasoning_content",
        "tool_calls",
        "observation",
        "metrics",
        "reasoning_effort",
        "is_copied_context",
        "llm_call_count",
        "extra",
    }
)
# Per-token arrays can be larger than the whole conversation; they are dropped.
BULKY_METRIC_KEYS = ("prompt_token_ids", "completion_token_ids", "logprobs")
# Metric keys with a ParsedStep field of their own, or dropped; the rest go to extra.
STEP_METRIC_KEYS = frozenset({"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", *BULKY_METRIC_KEYS})


class AtifError(JsonFileError):
    """A trajectory file that cannot be read at all: not JSON, or no ATIF trajectory."""


# -- Entry points -------------------------------------------------------------


def parse_trajectory_file(
    path: Path,
    *,
    attempts: int = 1,
    delay: float = 0.1,
    first_read: bytes | None = None,
    read: Callable[[], bytes] | None = None,
) -> ParsedTrajectory:
    path = Path(path)
    with gc_paused():
        try:
            data, storable, notes = read_json(path, attempts=attempts, delay=delay, first_read=first_read, read=read)
        except JsonFileError as exc:
            raise AtifError(exc.source, exc.problem) from exc
        # The bytes go now when the caller gave them up (read_trial_folder's
        # `consume`): a long file decoded weighs twice its bytes already.
        first_read = None
        return _parse(data, source=str(path), storable=storable, notes=notes)


def parse_trajectory_text(text: str | bytes, *, source: str = "trajectory") -> ParsedTrajectory:
    with gc_paused():
        try:
            data, storable, notes = decode_tolerantly(text)
        except json.JSONDecodeError as exc:
            raise AtifError(source, f"is not valid JSON ({exc})") from exc
        return _parse(data, source=source, storable=storable, notes=notes)


def parse_trajectory_data(data: Any, *, source: str = "trajectory") -> ParsedTrajectory:
    """A ParsedTrajectory from decoded JSON; validation problems become warnings."""
    with gc_paused():
        return _parse(data, source=source, storable=False)


class StreamError(AtifError):
    """A file parse_trajectory_stream could not read step by step: read it whole, which says exactly why."""


def parse_trajectory_stream(open_file: Callable[[], Any], *, source: str, keep_text: bool = True) -> ParsedTrajectory:
    """parse_trajectory_file's trajectory, from a file read step by step (reading.json_stream).

    Neither the file's bytes nor its decoded whole are held: each step is
    validated and converted as it is decoded, and only its conversion kept.
    The result is parse_trajectory_file's for the same bytes. A file that
    is not JSON, is cut short, holds bytes that are not UTF-8 or nests too
    deep raises StreamError: the whole-file reader then gives the reason
    (or repairs the bytes) as it always did.

    Without `keep_text` each step is kept without_text: a caller that reads
    the text by stream_steps, a batch at a time (the text of a long
    trajectory, decoded, weighed 1.7 times its file).
    """
    from trajectories.reading.json_stream import StreamedDocument, read_streamed

    with gc_paused():
        converter = _Converter([], storable=False)
        validation = StepwiseValidation()
        steps: list[ParsedStep] = []

        def on_step(position: int, raw: Any) -> None:
            validation.add(position, raw)
            step = converter.step_or_none(raw, position)
            if step is not None:
                steps.append(step if keep_text else without_text(step))

        try:
            with open_file() as handle:
                document = read_streamed(handle, "steps", on_step)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise StreamError(source, f"cannot be read step by step ({type(exc).__name__}: {exc})") from exc
        if not isinstance(document, StreamedDocument):
            raise AtifError(source, f"is not an ATIF trajectory (a JSON {type(document).__name__}, not an object)")
        if not document.streamed:
            raise AtifError(source, "is not an ATIF trajectory (no list of steps)")
        data = document.fields
        try:
            messages = _messages(validation.errors(data))
        except Exception as exc:  # noqa: BLE001  (a validator bug must not stop an import)
            messages = [_short(f"validation failed: {type(exc).__name__}: {exc}")]
        # The order a whole-file parse gives: validation first, then what conversion found.
        converter.warnings[:0] = messages
        trajectory = converter.finish(data, steps, depth=0)
        trajectory.warnings = _cap(converter.warnings)
        return trajectory


def without_text(step: ParsedStep) -> ParsedStep:
    """`step` without its message, reasoning, tool calls and observations: what is known of it before stream_steps reads it again."""
    return ParsedStep(
        step_id=step.step_id, timestamp=step.timestamp, source=step.source, model_name=step.model_name,
        prompt_tokens=step.prompt_tokens, completion_tokens=step.completion_tokens, cached_tokens=step.cached_tokens,
        cost_usd=step.cost_usd, extra=step.extra,
    )


def stream_steps(open_file: Callable[[], Any], on_step: Callable[[int, ParsedStep], None]) -> int:
    """Hand each step of a file parse_trajectory_stream read, converted as it converted it, to on_step(position, step).

    Not validated again, nor numbered: the caller holds what that first
    read made of the steps (their numbers included) and checks these are
    the same steps. Returns how many there were.
    """
    from trajectories.reading.json_stream import read_streamed

    converter = _Converter([], storable=False)
    count = 0

    def on_raw(position: int, raw: Any) -> None:
        nonlocal count
        step = converter.step_or_none(raw, position)
        if step is not None:
            on_step(count, step)
            count += 1

    with open_file() as handle:
        read_streamed(handle, "steps", on_raw)
    return count


def parse_steps(raws: list[Any], *, first_position: int, warnings: list[str]) -> list[ParsedStep] | None:
    """The steps a growing trajectory gained (reading.growing_trajectory), converted as a full parse would.

    None when one of them is no object or is not numbered on from the steps
    before it: a full parse skips or renumbers such steps, which moves the
    positions of those already stored. Schema validation is the full
    parse's (Harbor validates whole trajectories, not steps).
    """
    converter = _Converter(warnings, storable=False)
    steps = []
    for position, raw in enumerate(raws, first_position):
        if not isinstance(raw, dict) or storable_int(raw.get("step_id")) != position + 1:
            return None
        steps.append(converter.step(raw, position))
    return steps


def _parse(data: Any, *, source: str, storable: bool, notes: list[str] = ()) -> ParsedTrajectory:
    if not isinstance(data, dict):
        raise AtifError(source, f"is not an ATIF trajectory (a JSON {type(data).__name__}, not an object)")
    if not isinstance(data.get("steps"), list):
        raise AtifError(source, "is not an ATIF trajectory (no list of steps)")
    warnings = [*notes, *validation_warnings(data)]
    trajectory = _Converter(warnings, storable).trajectory(data, depth=0)
    trajectory.warnings = _cap(warnings)
    return trajectory


def load_validator() -> None:
    """Import Harbor's trajectory model, which validation_warnings uses (about 75 ms the first time).

    Bulk import's worker processes, forked after their parent called this,
    share it instead of each building it in its first trial.
    """
    from harbor.models.trajectories import Trajectory  # noqa: F401


# Trajectories of more steps than this are validated one step at a time
# (validation_warnings): Harbor's models of every step at once weighed as
# much as the decoded file again.
VALIDATION_CHUNK = 500
# Trajectory fields declared before `steps`: pydantic reports their errors first.
_FIELDS_BEFORE_STEPS = frozenset({"schema_version", "session_id", "trajectory_id", "agent"})


def validation_warnings(data: dict, *, chunk: int = VALIDATION_CHUNK) -> list[str]:
    """Harbor's validation errors for `data` as short strings ([] when valid).

    A long trajectory gives the same errors, in the same order, as Harbor's
    Trajectory.model_validate of the whole, without holding a model of
    every step at once (see StepwiseValidation).
    """
    try:
        steps = data.get("steps")
        if isinstance(steps, list) and len(steps) > chunk:
            validation = StepwiseValidation()
            for position, raw in enumerate(steps):
                validation.add(position, raw)
            errors = validation.errors(data)
        else:
            errors = _whole_errors(data)
    except Exception as exc:  # noqa: BLE001  (a validator bug must not stop an import)
        return [_short(f"validation failed: {type(exc).__name__}: {exc}")]
    return _messages(errors)


def _whole_errors(data: dict) -> list[dict]:
    from pydantic import ValidationError

    from harbor.models.trajectories import Trajectory

    try:
        Trajectory.model_validate(data)
    except ValidationError as exc:
        return exc.errors(include_url=False, include_input=False) or [{"msg": str(exc)}]
    return []


def _messages(errors: list[dict]) -> list[str]:
    out = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ())) or "trajectory"
        out.append(_short(f"{where}: {error.get('msg', 'invalid')}"))
    return out


class StepwiseValidation:
    """Trajectory.model_validate's errors, one step's model in memory at a time.

    Each step is validated alone as it comes (add; its errors located under
    steps.N), the rest of the document once with a single placeholder step
    (errors), and Harbor's checks across steps (Trajectory's "after"
    validators: sequential ids, subagent ids, tool call references) run on
    what they read of each step, kept small. Pydantic runs those checks
    only when every field is valid, and reports the first that fails; so
    does this.
    """

    def __init__(self) -> None:
        self.step_errors: list[dict] = []
        self.read: list[Any] = []
        self.n_steps = 0

    def add(self, position: int, raw: Any) -> None:
        from pydantic import ValidationError

        from harbor.models.trajectories.step import Step

        self.n_steps += 1
        try:
            model = Step.model_validate(raw)
        except ValidationError as exc:
            for error in exc.errors(include_url=False, include_input=False):
                self.step_errors.append(dict(error, loc=("steps", position, *error.get("loc", ()))))
            return
        self.read.append(_what_checks_read(model))

    def errors(self, data: dict) -> list[dict]:
        """The errors of the whole document: `data` with its steps (or not: they came through add)."""
        from types import SimpleNamespace

        from pydantic import ValidationError

        from harbor.models.trajectories import Trajectory

        if not self.n_steps:
            return _whole_errors(dict(data, steps=[]))
        try:
            Trajectory.model_validate(dict(data, steps=[{"step_id": 1, "source": "system", "message": ""}]))
            rest: list[dict] = []
        except ValidationError as exc:
            rest = exc.errors(include_url=False, include_input=False)
        fields = [error for error in rest if error.get("loc") and error["loc"][0] != "steps"]
        if self.step_errors or fields:
            checks: list[dict] = []
        else:
            steps = SimpleNamespace(steps=self.read)
            # The placeholder step passes the step checks: the only one that can fail above is the subagents'.
            checks = _first_failure(Trajectory.validate_step_ids, steps)
            checks = checks or [error for error in rest if not error.get("loc")]
            checks = checks or _first_failure(Trajectory.validate_tool_call_references, steps)
        before = [error for error in fields if error["loc"][0] in _FIELDS_BEFORE_STEPS]
        after = [error for error in fields if error["loc"][0] not in _FIELDS_BEFORE_STEPS]
        return [*before, *self.step_errors, *after, *checks]


def _what_checks_read(step) -> Any:
    """A validated step cut to what Trajectory's checks across steps read."""
    from types import SimpleNamespace

    results = step.observation.results if step.observation is not None else []
    if not any(result.source_call_id is not None for result in results):
        return SimpleNamespace(step_id=step.step_id, observation=None, tool_calls=None)
    return SimpleNamespace(
        step_id=step.step_id,
        tool_calls=[SimpleNamespace(tool_call_id=call.tool_call_id) for call in step.tool_calls or []],
        observation=SimpleNamespace(results=[SimpleNamespace(source_call_id=result.source_call_id) for result in results]),
    )


def _first_failure(check, trajectory) -> list[dict]:
    """The error pydantic reports when one of Trajectory's "after" validators raises."""
    try:
        check(trajectory)
    except ValueError as exc:
        return [{"type": "value_error", "loc": (), "msg": f"Value error, {exc}"}]
    return []


# -- Conversion ---------------------------------------------------------------


class _Converter:
    """The tolerant conversion of one decoded document and its subagents.

    `storable` says the decoder already ruled out NUL characters and lone
    surrogates, so strings are taken as they are rather than checked one
    by one; the result is the same either way.
    """

    def __init__(self, warnings: list[str], storable: bool):
        self.warnings = warnings
        self.text = clean_storable_text if storable else clean_text
        self.json = clean_storable_json if storable else clean_json

    def trajectory(self, data: dict, *, depth: int) -> ParsedTrajectory:
        steps = []
        for position, raw in enumerate(data["steps"]):
            step = self.step_or_none(raw, position)
            if step is not None:
                steps.append(step)
        return self.finish(data, steps, depth=depth)

    def step_or_none(self, raw: Any, position: int) -> ParsedStep | None:
        if not isinstance(raw, dict):
            self.warnings.append(_short(f"steps.{position}: not an object, skipped"))
            return None
        return self.step(raw, position)

    def finish(self, data: dict, steps: list[ParsedStep], *, depth: int) -> ParsedTrajectory:
        """The trajectory of `data` (its steps aside) with its converted `steps`: numbered, with its subagents."""
        text, warnings = self.text, self.warnings
        agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
        agent_extra = dict(agent["extra"]) if isinstance(agent.get("extra"), dict) else {}
        if isinstance(agent.get("tool_definitions"), list):
            agent_extra["tool_definitions"] = agent["tool_definitions"]
        root = {
            key: data[key]
            for key in ("notes", "extra", "continued_trajectory_ref")
            if data.get(key) not in (None, "", {})
        }
        if root:
            agent_extra["trajectory"] = root

        number_by_position(steps, warnings)

        subagents = []
        embedded = data.get("subagent_trajectories")
        if isinstance(embedded, list):
            if depth >= MAX_SUBAGENT_DEPTH:
                warnings.append("subagent_trajectories nested too deep, ignored")
            else:
                for index, sub in enumerate(embedded):
                    if isinstance(sub, dict) and isinstance(sub.get("steps"), list):
                        subagents.append(self.trajectory(sub, depth=depth + 1))
                    else:
                        warnings.append(_short(f"subagent_trajectories.{index}: no list of steps, skipped"))

        final_metrics = data.get("final_metrics")
        return ParsedTrajectory(
            schema_version=text(data.get("schema_version"))[:SCHEMA_VERSION_LENGTH],
            session_id=text(data.get("session_id")),
            agent_name=text(agent.get("name"))[:NAME_LENGTH],
            agent_version=text(agent.get("version"))[:NAME_LENGTH],
            model_name=text(agent.get("model_name"))[:NAME_LENGTH],
            steps=steps,
            agent_extra=self.json(agent_extra),
            final_metrics=self.json(final_metrics) if isinstance(final_metrics, dict) else {},
            subagents=subagents,
            trajectory_id=text(data.get("trajectory_id")),
        )

    def step(self, raw: dict, position: int) -> ParsedStep:
        text, get = self.text, raw.get
        extra: dict[str, Any] = {}
        step_id = storable_int(get("step_id"))
        if step_id is None:
            step_id = position + 1
            self.warnings.append(_short(f"steps.{position}.step_id: missing or not an integer, using {step_id}"))

        message, parts = self.content(get("message"))
        if parts:
            extra["message_parts"] = parts

        metrics = get("metrics")
        if not isinstance(metrics, dict):
            metrics = {}
        elif not STEP_METRIC_KEYS.issuperset(metrics):
            extra["metrics"] = {key: value for key, value in metrics.items() if key not in STEP_METRIC_KEYS}

        tool_calls = []
        raw_calls = get("tool_calls")
        if isinstance(raw_calls, list):
            for index, call in enumerate(raw_calls):
                if not isinstance(call, dict):
                    continue
                call_id = text(call.get("tool_call_id"))[:NAME_LENGTH]
                tool_calls.append(
                    ParsedToolCall(
                        call_id=call_id,
                        function_name=text(call.get("function_name"))[:NAME_LENGTH] or "unknown",
                        arguments=self.arguments(call.get("arguments")),
                    )
                )
                call_extra = call.get("extra")
                if isinstance(call_extra, dict) and call_extra:
                    extra.setdefault("tool_call_extra", {})[call_id or str(index)] = call_extra

        observations = []
        observation = get("observation")
        results = observation.get("results") if isinstance(observation, dict) else None
        if isinstance(results, list):
            for result in results:
                if isinstance(result, dict):
                    observations.append(self.observation(result))
                elif isinstance(result, str):
                    observations.append(ParsedObservation(source_call_id="", content=text(result)))

        for key in ("reasoning_effort", "is_copied_context", "llm_call_count"):
            value = get(key)
            if value is not None:
                extra[key] = value
        step_extra = get("extra")
        if isinstance(step_extra, dict) and step_extra:
            extra["extra"] = step_extra
        if not KNOWN_STEP_KEYS.issuperset(raw):
            extra["unknown"] = {key: value for key, value in raw.items() if key not in KNOWN_STEP_KEYS}

        return ParsedStep(
            step_id=step_id,
            timestamp=parse_timestamp(get("timestamp")),
            source=(text(get("source")) or "unknown")[:SOURCE_LENGTH],
            message=message,
            reasoning=text(get("reasoning_content")),
            model_name=text(get("model_name"))[:NAME_LENGTH],
            prompt_tokens=storable_int(metrics.get("prompt_tokens")),
            completion_tokens=storable_int(metrics.get("completion_tokens")),
            cached_tokens=storable_int(metrics.get("cached_tokens")),
            cost_usd=as_float(metrics.get("cost_usd")),
            tool_calls=tool_calls,
            observations=observations,
            extra=self.json(extra) if extra else {},
        )

    def observation(self, result: dict) -> ParsedObservation:
        content, parts = self.content(result.get("content"))
        extra: dict[str, Any] = {}
        if parts:
            extra["content_parts"] = parts
        result_extra = result.get("extra")
        if isinstance(result_extra, dict) and result_extra:
            extra["extra"] = result_extra
        refs = result.get("subagent_trajectory_ref")
        # ATIF allows one ref object (older files) or a list of them.
        if isinstance(refs, dict):
            refs = [refs]
        refs = [ref for ref in refs if isinstance(ref, dict)] if isinstance(refs, list) else []
        subagent_ref = None
        if refs:
            subagent_ref = self.json(refs[0])
            if len(refs) > 1:
                extra["subagent_refs"] = refs
        return ParsedObservation(
            source_call_id=self.text(result.get("source_call_id"))[:NAME_LENGTH],
            content=content,
            subagent_ref=subagent_ref,
            extra=self.json(extra) if extra else {},
        )

    def content(self, value: Any) -> tuple[str, list]:
        """(text, other parts) of a message or observation content.

        ATIF 1.6 allows a list of content parts (text, image, audio) instead of
        a string; the text parts are joined and the others returned for `extra`.
        """
        if type(value) is str:  # the usual case, first
            return self.text(value), []
        if value is None:
            return "", []
        if isinstance(value, str):
            return self.text(value), []
        if isinstance(value, list):
            texts, others = [], []
            for part in value:
                if isinstance(part, dict) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif isinstance(part, str):
                    texts.append(part)
                else:
                    others.append(part)
            return self.text("\n".join(texts)), others
        return self.text(value), []

    def arguments(self, value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            return self.json(value)
        if isinstance(value, str):
            # Some producers store the provider's raw JSON string; what it
            # decodes to is checked in full, escapes may hide anything.
            try:
                decoded = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                return {"_raw": self.text(value)}
            return clean_json(decoded) if isinstance(decoded, dict) else {"_raw": self.text(value)}
        if value is None:
            return {}
        return {"_value": self.json(value)}


# -- Step numbers -------------------------------------------------------------

# How many repeated ids and gaps a warning lists before "and N more".
LISTED = 5


def number_by_position(steps: list[ParsedStep], warnings: list[str]) -> None:
    """Number steps 1, 2, 3, ... by position when their ids are not; keep the file's id in extra["atif_step_id"].

    ATIF ids are sequential from 1, and pages and permalinks address a step
    by that number. A file whose ids repeat (ten steps all "10") or skip
    would give several steps one address, or addresses that lead nowhere;
    numbering by position keeps every step reachable. The warning says how
    many ids repeat and how many are missing, and lists the first few.
    """
    ids = [step.step_id for step in steps]
    if ids == list(range(1, len(ids) + 1)):
        return
    counts: dict[int, int] = {}
    for step_id in ids:
        counts[step_id] = counts.get(step_id, 0) + 1
    repeated = [(step_id, n) for step_id, n in counts.items() if n > 1]
    gaps = _gaps(sorted(counts))
    parts = []
    if repeated:
        extra = sum(n - 1 for _, n in repeated)
        listed = ", ".join(f"{step_id} ×{n}" for step_id, n in repeated[:LISTED])
        more = f", and {len(repeated) - LISTED} more" if len(repeated) > LISTED else ""
        parts.append(f"{extra} step{'s' if extra != 1 else ''} repeat an id ({listed}{more})")
    if gaps:
        listed = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in gaps[:LISTED])
        more = f", and {len(gaps) - LISTED} more" if len(gaps) > LISTED else ""
        parts.append(f"{len(gaps)} gap{'s' if len(gaps) != 1 else ''} (missing {listed}{more})")
    if not parts:
        parts.append("ids out of order")
    warnings.append(_short(f"step ids: {'; '.join(parts)}; steps are numbered by position (the file's id kept as atif_step_id)"))
    for position, step in enumerate(steps, 1):
        if step.step_id != position:
            step.extra = dict(step.extra, atif_step_id=step.step_id)
            step.step_id = position


def _gaps(ids: list[int]) -> list[tuple[int, int]]:
    """Missing runs between 1 and the largest id, as (first, last)."""
    gaps, expected = [], 1
    for step_id in ids:
        if step_id > expected:
            gaps.append((expected, step_id - 1))
        expected = max(expected, step_id + 1)
    return gaps


def _short(text: str) -> str:
    text = " ".join(clean_text(text).split())
    return text if len(text) <= MAX_WARNING_LENGTH else text[: MAX_WARNING_LENGTH - 1] + "…"


def _cap(warnings: list[str]) -> list[str]:
    if len(warnings) <= MAX_WARNINGS:
        return warnings
    return warnings[: MAX_WARNINGS - 1] + [f"... and {len(warnings) - MAX_WARNINGS + 1} more"]
