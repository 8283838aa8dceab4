"""Read Inspect AI logs (`.eval` and `.json`) into the shapes a Harbor trial becomes. No ORM.

METR runs RE-Bench through Inspect AI: a run is a *sample* of an eval log.
Each sample becomes one `TrialFolder` (the plain value `trajectories.storing.ingest`
stores), so that an Inspect run gets the same storing and the same step
analysis as a Harbor trial:

- messages become ATIF-shaped steps: system and user messages as such, each
  assistant message one agent step with its tool calls (Inspect's `bash`
  sends `cmd`, its `text_editor` the editor's `command`/`path`/`file_text`/
  `old_str`/`new_str`, which the step-kind table reads as they are), and the
  tool messages that answer it as that step's observations;
- intermediate score events (`ScoreEvent.intermediate`, what a scoring tool
  records during the run) become the score log: the score's value and the
  working time when it was recorded (`working_start`), and the raw score
  when its metadata carries one (`raw`);
- the sample's final score (its first scorer's, or `scorer` named) is the
  reward, read as Inspect reads it (`value_to_float`: "C" 1, "I" 0, "P"
  0.5, "N" 0, numbers as they are), the value as written kept beside it;
  its model usage the tokens and cost;
- a sample that errored is not scored and, as in Inspect's own metrics,
  not counted as 0: it is imported with its error and `excluded` says why;
- each sample's epoch is one rollout, carrying its sample id and the log's
  epoch reducer (`config["inspect"]`, "mean" unless the log names another):
  the figures reduce a sample's epochs with it before averaging the
  samples, as Inspect's own metrics do;
- one clock: a step's time is the working time of the model call that made
  it (`working_start`), as the score log's, so steps and scores line up;
- `submit`, called beside other tools in one message, is a step of its own.

The log is read with inspect_ai's own reader; anything it cannot read, or a
sample without an id, raises InspectLogError naming the file, and nothing
of that log is returned.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tasks.lib.numbers import as_float

from trajectories.reading.masked import mask_folder
from trajectories.reading.parsed import ParsedObservation, ParsedStep, ParsedToolCall, ParsedTrajectory
from trajectories.reading.trial_folder import Phase, TrialFolder

LOG_SUFFIXES = (".eval", ".json")
HARNESS = "inspect"
SCHEMA = "inspect-eval"
# inspect_ai's agents for human baselines: a log run by one is a human attempt.
HUMAN_SOLVERS = ("human_agent", "human_cli")
# Inspect's answer tool (basic_agent, react): the end of a run.
SUBMIT_TOOL = "submit"


class InspectLogError(ValueError):
    """A log that cannot be imported; the message names the file and the problem."""


def find_logs(path: Path) -> list[Path]:
    """`path` itself when it is a log, else the logs in it and its subfolders, in name order."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in LOG_SUFFIXES and not p.name.startswith("."))


def is_inspect_log(path: Path) -> bool:
    """Inspect's zip container, or a JSON log whose top level has an `eval` spec."""
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"eval"' in head and (b'"version"' in head or b'"status"' in head)


def read_log(path: Path | str, scorer: str | None = None) -> list[TrialFolder]:
    """Every sample of one Inspect log as a TrialFolder; InspectLogError if the log cannot be read whole."""
    from inspect_ai.log import read_eval_log  # heavy: imported only when a log is read

    path = Path(path)
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # noqa: BLE001  (the reader raises many kinds for a damaged file)
        raise InspectLogError(f"{path}: not a readable Inspect log ({type(error).__name__}: {_short(error)})") from error
    if not log.samples:
        raise InspectLogError(f"{path}: the log holds no samples (status {log.status})")
    spec = log.eval
    solvers = [step.solver for step in (log.plan.steps if log.plan else [])] or ([spec.solver] if spec.solver else [])
    reducer = epoch_reducer(log, scorer)
    folders = []
    for sample in log.samples:
        if sample.id is None or sample.id == "":
            raise InspectLogError(f"{path}: a sample has no id")
        folder = _sample_folder(path, spec, solvers, sample, scorer)
        folder.config["inspect"]["reducer"] = reducer
        mask_folder(folder)
        folders.append(folder)
    return folders


def epoch_reducer(log, scorer: str | None = None) -> str:
    """The reducer Inspect applied to each sample's epochs for the headline score (of `scorer` when named).

    The log's results name it per scorer (None: Inspect's default, "mean");
    a log without results (cancelled, errored) has the task's setting.
    """
    results = getattr(log, "results", None)
    for score in getattr(results, "scores", None) or []:
        if scorer is None or scorer in (score.scorer, score.name):
            return score.reducer or "mean"
    configured = getattr(log.eval.config, "epochs_reducer", None) or []
    return configured[0] if configured else "mean"


def is_human_run(folder: TrialFolder) -> bool:
    return any(name in folder.agent_name for name in HUMAN_SOLVERS)


def _sample_folder(path: Path, spec, solvers: list[str], sample, scorer: str | None) -> TrialFolder:
    run = spec.run_id or spec.eval_id
    trial_name = f"inspect__{spec.task_id or spec.task}__{run}__{sample.id}__e{sample.epoch}"
    provider, _, model = (spec.model or "").partition("/")
    started = _when(getattr(sample, "started_at", None)) or _first_event_time(sample.events) or _when(spec.created)
    finished = _when(getattr(sample, "completed_at", None))
    if finished is None and started is not None and sample.total_time is not None:
        finished = started + timedelta(seconds=sample.total_time)
    steps = list(_steps(sample.messages, sample.events, started))
    input_tokens, output_tokens, cache, cost = _usage(sample.model_usage)
    reward, fields = _final_score(sample.scores, scorer)
    error = getattr(sample, "error", None)
    excluded = ""
    if error is not None:
        # Inspect leaves an errored sample out of its metrics; so do the figures.
        excluded = f"the sample errored, and Inspect does not score it: {_short_text(getattr(error, 'message', '') or str(error))}"
        reward, fields = None, {**fields, "error": _short_text(getattr(error, "message", "") or str(error))}
    folder = TrialFolder(
        path=path,
        trial_name=trial_name[:300],
        task_name=_task_name(spec.task),
        trial_id=str(getattr(sample, "uuid", "") or "")[:100],
        job_id=str(run)[:100],
        finished=True,
        config={"inspect": {"task": spec.task, "model": spec.model, "solvers": solvers, "sample_id": str(sample.id),
                            "epoch": sample.epoch, "task_args": _jsonable(spec.task_args)}},
        agent_name=solvers[-1] if solvers else HARNESS,
        agent_version="",
        model_name=model or provider,
        model_provider=provider if model else "",
        started_at=started,
        finished_at=finished,
        phases={"agent_execution": Phase(started, finished)},
        n_input_tokens=input_tokens,
        n_cache_tokens=cache,
        n_output_tokens=output_tokens,
        cost_usd=cost,
        n_episodes=sum(1 for step in steps if step.source == "agent"),
        exception_type=type(error).__name__ if error else "",
        exception_message=(getattr(error, "message", "") or "")[:10_000] if error else "",
        exception_traceback=(getattr(error, "traceback", "") or "")[:50_000] if error else "",
        reward=reward,
        verifier_fields=fields,
        trajectory=ParsedTrajectory(
            schema_version=SCHEMA, session_id=trial_name, agent_name=solvers[-1] if solvers else HARNESS,
            agent_version="", model_name=spec.model or "", steps=steps,
        ),
        score_log=list(_score_log(sample.events)),
        excluded=excluded,
    )
    folder.checksum = _checksum(sample)
    return folder


def _steps(messages, events, started: datetime | None) -> Iterable[ParsedStep]:
    """ATIF-shaped steps: an assistant message and the tool results that answer it make one agent step."""
    times = _message_times(events, started)
    position = 0
    current: ParsedStep | None = None
    for message in messages:
        role = message.role
        if role == "tool":
            if current is not None:
                current.observations.append(
                    ParsedObservation(
                        source_call_id=getattr(message, "tool_call_id", "") or "",
                        content=_message_text(message) + (f"\n{message.error.message}" if getattr(message, "error", None) else ""),
                    )
                )
            continue
        if current is not None:
            yield current
            current = None
        position += 1
        step = ParsedStep(
            step_id=position,
            timestamp=times.get(getattr(message, "id", None) or "", None),
            source={"assistant": "agent"}.get(role, role),
            message=_message_text(message),
        )
        if role == "assistant":
            step.reasoning = _reasoning(message)
            step.model_name = getattr(message, "model", "") or ""
            calls = [
                ParsedToolCall(call_id=call.id or "", function_name=call.function, arguments=_jsonable(
                    call.arguments if isinstance(call.arguments, dict) else {"input": call.arguments}))
                for call in getattr(message, "tool_calls", None) or []
            ]
            submits = [call for call in calls if call.function_name == SUBMIT_TOOL]
            step.tool_calls = [call for call in calls if call.function_name != SUBMIT_TOOL] or submits
            if submits and step.tool_calls is not submits:
                # Its own step, after the others: the run's final answer is where it ends.
                yield step
                position += 1
                step = ParsedStep(step_id=position, timestamp=step.timestamp, source="agent", tool_calls=submits,
                                  model_name=step.model_name)
            current = step
            continue
        yield step
    if current is not None:
        yield current


def _message_times(events, started: datetime | None) -> dict[str, datetime]:
    """When each output message's model call began, on the sample's working clock (the score log's).

    `working_start` leaves out time spent waiting (on rate limits, on a
    human), as Inspect's score events do; with no start to count from, the
    event's wall time.
    """
    found: dict[str, datetime] = {}
    for event in events or []:
        if getattr(event, "event", "") != "model":
            continue
        working = as_float(getattr(event, "working_start", None))
        when = started + timedelta(seconds=working) if started is not None and working is not None else _when(event.timestamp)
        output = getattr(event, "output", None)
        for choice in getattr(output, "choices", None) or []:
            message_id = getattr(choice.message, "id", None)
            if message_id and message_id not in found:
                found[message_id] = when
    return found


def score_value(value: Any) -> float | None:
    """A score's value as Inspect's metrics read it (`value_to_float`: "C" 1, "I" 0, "P" 0.5, "N" 0); None for a dict or list."""
    from inspect_ai.scorer import value_to_float

    if isinstance(value, (dict, list)) or value is None:
        return None
    try:
        return as_float(value_to_float()(value))
    except (TypeError, ValueError):
        return None


def _score_log(events) -> Iterable[dict[str, Any]]:
    for event in events or []:
        if getattr(event, "event", "") != "score" or not getattr(event, "intermediate", False):
            continue
        value = score_value(event.score.value)
        if value is None:
            continue
        metadata = event.score.metadata or {}
        yield {"t": float(event.working_start or 0.0), "score": value, "raw": as_float(metadata.get("raw"))}


def _final_score(scores: dict | None, scorer: str | None) -> tuple[float | None, dict[str, Any]]:
    """The reward (a named scorer's, else the first numeric one) and every score as verifier fields."""
    if not scores:
        return None, {}
    fields: dict[str, Any] = {}
    for name, score in scores.items():
        fields[name] = _jsonable(score.value)
        if score.answer:
            fields[f"{name}_answer"] = str(score.answer)[:1000]
        if score.explanation:
            fields[f"{name}_explanation"] = str(score.explanation)[:2000]
        for key, value in (score.metadata or {}).items():
            fields[f"{name}_{key}"] = _jsonable(value)
    names = [scorer] if scorer else list(scores)
    for name in names:
        if name in scores:
            value = score_value(scores[name].value)
            if value is not None:
                fields.setdefault("metric", as_float((scores[name].metadata or {}).get("raw")))
                if fields["metric"] is None:
                    del fields["metric"]
                return value, fields
    return None, fields


def _usage(usage: dict | None) -> tuple[int | None, int | None, int | None, float | None]:
    if not usage:
        return None, None, None, None
    values = list(usage.values())
    cache = [u.input_tokens_cache_read for u in values if u.input_tokens_cache_read is not None]
    costs = [u.total_cost for u in values if getattr(u, "total_cost", None) is not None]
    return (
        sum(u.input_tokens for u in values),
        sum(u.output_tokens for u in values),
        sum(cache) if cache else None,
        sum(costs) if costs else None,
    )


def _message_text(message) -> str:
    """A chat message's text: its content, or the text parts of it joined."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if getattr(part, "type", "") == "text":
            parts.append(part.text)
    return "\n".join(parts)


def _reasoning(message) -> str:
    content = message.content
    if isinstance(content, str):
        return ""
    return "\n".join(getattr(part, "reasoning", "") or "" for part in content or [] if getattr(part, "type", "") == "reasoning")


def _task_name(task: str) -> str:
    """"tasks.py@window_sums" or "pkg/window_sums" -> "window_sums"."""
    return (task or "").rsplit("@", 1)[-1].rsplit("/", 1)[-1]


def _first_event_time(events) -> datetime | None:
    for event in events or []:
        stamp = getattr(event, "timestamp", None)
        if stamp is not None:
            return _when(stamp)
    return None


def _when(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str, allow_nan=False))
    except ValueError:
        return str(value)


def _checksum(sample) -> str:
    """The sample's content: the same sample read again is unchanged."""
    return hashlib.sha256(sample.model_dump_json().encode()).hexdigest()


def _short(error: BaseException) -> str:
    return _short_text(str(error))


def _short_text(text: str) -> str:
    text = " ".join(text.split())
    return text[:300] + ("…" if len(text) > 300 else "")
