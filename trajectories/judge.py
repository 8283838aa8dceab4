"""Our own analysis of rollouts: an LLM judge reads a compressed trajectory against a rubric.

The judge is an `agents.AgentModel` (litellm model name, API base, the name
of its key's environment variable, prices), called through an
OpenAI-compatible chat completion with litellm, so any provider works through
its API base. What it is sent is `analysis.judge_digest` (a token budget the
staff choose) framed by `analysis.judge_rubric`; what it answers is read
strictly by `reading.judge_answer`; the result is stored only through
`trajectories.reviews` (kept per rollout, judge and rubric text; replaced
only on request). A judge that fails on one rollout (an HTTP error, a
timeout, malformed JSON) fails that rollout's review with the reason and
the batch goes on.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import IntegerField, Value
from django.db.models.functions import Left, Length, Right

from trajectories.analysis.judge_digest import (
    DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET, Digest, DigestHeader, DigestStep, compress, estimate_tokens,
)
from trajectories.analysis.judge_rubric import Rubric, load_rubric, messages
from trajectories.analysis.tool_vocabulary import tool_use
from trajectories.failures.service import effective_budget_sec
from trajectories.models import Observation, Review, Rollout, ToolCall
from trajectories.reading.judge_answer import parse_answer
from trajectories.reading.review_data import ReadingError
from trajectories.reviews import existing_review, record_failed_review, record_review

logger = logging.getLogger(__name__)

DEFAULT_ANSWER_TOKENS = 4_000
# What of one output is read from the database: its head and tail (the digest cuts further).
OUTPUT_HEAD, OUTPUT_TAIL = 8_000, 4_000

DONE, CACHED, FAILED = "done", "cached", "failed"


class JudgeError(ValueError):
    """A judge that cannot be used at all (unknown, no model string): the whole request is refused."""


class JudgeCallError(RuntimeError):
    """One call that gave no answer (an HTTP error, a timeout): that rollout's review fails with it."""


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """An AgentModel as the judge's call needs it (plain values: a Celery worker's)."""

    name: str
    litellm_model: str
    api_base: str = ""
    api_key_env: str = ""
    sampling_params: dict = field(default_factory=dict)
    input_usd_per_mtok: float | None = None
    output_usd_per_mtok: float | None = None

    def cost(self, tokens_in: int | None, tokens_out: int | None) -> float | None:
        """What a call cost at the registered prices; None when a price or a count is unknown."""
        if None in (self.input_usd_per_mtok, self.output_usd_per_mtok, tokens_in, tokens_out):
            return None
        return (tokens_in * self.input_usd_per_mtok + tokens_out * self.output_usd_per_mtok) / 1e6


@dataclass(frozen=True, slots=True)
class JudgeAnswer:
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class RolloutResult:
    """What became of one rollout in a batch: done, cached (already read) or failed, and why."""

    rollout_id: int
    state: str
    detail: str = ""
    tokens_sent: int | None = None


def default_judge_name() -> str:
    """settings.AUTOLAB_JUDGE_MODEL, else the one model registered as a judge; "" when neither says."""
    from agents.models import AgentModel

    named = getattr(settings, "AUTOLAB_JUDGE_MODEL", "")
    if named:
        return named
    judges = list(AgentModel.objects.filter(is_judge=True).values_list("name", flat=True)[:2])
    return judges[0] if len(judges) == 1 else ""


def judge_settings(name: str | None = None) -> JudgeSettings:
    """The judge registered as `name` (default_judge_name when None); JudgeError when there is none to use."""
    from agents.models import AgentModel

    name = name or default_judge_name()
    if not name:
        raise JudgeError("no judge: name one (--judge MODEL), set AUTOLAB_JUDGE_MODEL, or register one model as a judge")
    model = AgentModel.objects.filter(name=name).first()
    if model is None:
        raise JudgeError(f"no model is registered as {name!r} (add it in the admin as an Agent model)")
    if not model.litellm_model:
        raise JudgeError(f"the model {name!r} has no litellm model string to call it by")
    return JudgeSettings(
        name=model.name, litellm_model=model.litellm_model, api_base=model.api_base, api_key_env=model.api_key_env,
        sampling_params=dict(model.sampling_params or {}), input_usd_per_mtok=model.input_usd_per_mtok,
        output_usd_per_mtok=model.output_usd_per_mtok,
    )


def timeout_sec() -> float:
    return float(getattr(settings, "AUTOLAB_JUDGE_TIMEOUT_SEC", 300))


# The call ------------------------------------------------------------------------


def call_judge(judge: JudgeSettings, chat: list[dict[str, str]], *, completion: Callable | None = None) -> JudgeAnswer:
    """One chat completion through litellm; JudgeCallError with the reason when it gives no answer."""
    if completion is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list at run time
        import litellm

        completion = litellm.completion
    params = {k: v for k, v in judge.sampling_params.items() if k not in ("model_info", "api_key")}
    arguments: dict[str, Any] = {
        "model": judge.litellm_model, "messages": chat, "timeout": timeout_sec(), "num_retries": 0,
        "drop_params": True, "max_tokens": DEFAULT_ANSWER_TOKENS, **params,
    }
    if judge.api_base:
        arguments["api_base"] = judge.api_base
    # A key in the sampling parameters is a placeholder (a local stub's), never a secret.
    key = os.environ.get(judge.api_key_env, "") if judge.api_key_env else ""
    key = key or judge.sampling_params.get("api_key", "")
    if judge.api_key_env and not key:
        raise JudgeCallError(f"the API key variable {judge.api_key_env} is not set on this worker")
    if key:
        arguments["api_key"] = key
    try:
        response = completion(**arguments)
    except Exception as exc:  # noqa: BLE001  (every provider's failure is a reason to record)
        raise JudgeCallError(f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}") from None
    try:
        text = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        text = None
    usage = getattr(response, "usage", None)
    tokens_in = _count(getattr(usage, "prompt_tokens", None))
    tokens_out = _count(getattr(usage, "completion_tokens", None))
    cost = judge.cost(tokens_in, tokens_out)
    if cost is None:
        hidden = getattr(response, "_hidden_params", None) or {}
        provider_cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
        cost = float(provider_cost) if isinstance(provider_cost, (int, float)) and provider_cost > 0 else None
    return JudgeAnswer(text or "", tokens_in, tokens_out, cost)


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# The digest of a stored rollout ---------------------------------------------------


def digest_of(rollout: Rollout, budget: int) -> Digest:
    """The rollout's main trajectory as the judge reads it, within `budget` tokens."""
    steps = list(
        rollout.steps.filter(subtrajectory__isnull=True).order_by("position").values(
            "id", "step_id", "source", "kinds", "elapsed_sec", "message", "diff", "metric_value", "metric_unit",
            "metric_score", "metric_status", "repeats",
        )
    )
    commands: dict[int, list[str]] = {}
    for step_pk, name, arguments in (
        ToolCall.objects.filter(step__rollout=rollout, step__subtrajectory__isnull=True)
        .order_by("step_id", "position").values_list("step_id", "function_name", "arguments")
    ):
        commands.setdefault(step_pk, []).append(_call_text(name, arguments))
    outputs: dict[int, list[str]] = {}
    for step_pk, head, tail, length in (
        Observation.objects.filter(step__rollout=rollout, step__subtrajectory__isnull=True)
        .annotate(head=Left("content", OUTPUT_HEAD), tail=Right("content", OUTPUT_TAIL),
                  length=Length("content", output_field=IntegerField()))
        .order_by("step_id", "position").values_list("step_id", "head", "tail", "length")
    ):
        text = head if (length or 0) <= OUTPUT_HEAD else f"{head}\n[... {length - OUTPUT_HEAD - OUTPUT_TAIL} characters cut ...]\n{tail}"
        outputs.setdefault(step_pk, []).append(text)
    digest_steps = [
        DigestStep(
            step_id=row["step_id"], source=row["source"], kinds=tuple(row["kinds"].split()),
            elapsed_sec=row["elapsed_sec"], message=row["message"], commands=tuple(commands.get(row["id"], ())),
            outputs=tuple(outputs.get(row["id"], ())), diff=row["diff"], metric=_metric(row), repeats=row["repeats"],
        )
        for row in steps
    ]
    task = rollout.task
    exception = f"{rollout.exception_type}: {rollout.exception_message}".strip(": ") if rollout.exception_type else ""
    header = DigestHeader(
        task=task.name, instruction=task.instruction or "", budget_sec=effective_budget_sec(task.budget_sec, rollout.config),
        duration_sec=rollout.agent_duration_sec, reward=rollout.reward, n_benchmark_calls=rollout.n_benchmark_calls,
        exception=exception,
    )
    return compress(header, digest_steps, budget)


def _call_text(name: str, arguments: Any) -> str:
    command = tool_use(name, arguments).command
    if command is not None:
        return command
    return f"{name}({json.dumps(arguments, ensure_ascii=False, default=str)})"


def _metric(row: dict) -> str:
    if row["metric_status"] != "parsed" or row["metric_value"] is None:
        return "benchmark output without a metric" if row["metric_status"] == "unparseable" else ""
    text = f"metric {row['metric_value']:g}{' ' + row['metric_unit'] if row['metric_unit'] else ''}"
    return text + (f" (normalised score {row['metric_score']:.3g})" if row["metric_score"] is not None else "")


# One rollout, a batch ----------------------------------------------------------------


def analyze_rollout(
    rollout: Rollout, judge: JudgeSettings, rubric: Rubric, *, budget: int = DEFAULT_BUDGET, replace: bool = False,
    requested_by=None, completion: Callable | None = None,
) -> RolloutResult:
    """Read one rollout with the judge and store the review; never raises for what the judge did."""
    where = {"source": Review.Source.JUDGE, "judge": judge.name, "rubric_text": rubric.text}
    stored = existing_review(rollout, **where)
    if stored is not None and stored.state == Review.State.DONE and not replace:
        return RolloutResult(rollout.pk, CACHED, "already read (replace to read again)")
    record = {**where, "rubric": rubric.name, "requested_by": requested_by}
    chat, digest, sent = prompt_for(rollout, rubric, budget)
    try:
        answer = call_judge(judge, chat, completion=completion)
    except JudgeCallError as exc:
        record_failed_review(rollout, f"the judge gave no answer: {exc}", **record)
        return RolloutResult(rollout.pk, FAILED, str(exc), sent)
    try:
        reading = parse_answer(
            answer.text, rubric.names, digest.step_ids,
            tokens_in=answer.tokens_in, tokens_out=answer.tokens_out, cost_usd=answer.cost_usd,
        )
    except ReadingError as exc:
        record_failed_review(
            rollout, f"the judge's answer was refused: {exc}", tokens_in=answer.tokens_in,
            tokens_out=answer.tokens_out, cost_usd=answer.cost_usd, **record,
        )
        return RolloutResult(rollout.pk, FAILED, str(exc), sent)
    record_review(rollout, reading, replace=True, **record)
    return RolloutResult(rollout.pk, DONE, digest.level, sent)


def prompt_for(rollout: Rollout, rubric: Rubric, budget: int) -> tuple[list[dict[str, str]], Digest, int]:
    """The messages sent for `rollout`, its digest, and the estimated tokens of the whole within `budget`.

    The frame (instructions, rubric) is sent too: the trajectory gets what is left of the budget.
    """
    frame = estimate_tokens("".join(m["content"] for m in messages(rubric, "")))
    digest = digest_of(rollout, max(budget - frame, 1_000))
    chat = messages(rubric, digest.text)
    return chat, digest, estimate_tokens("".join(m["content"] for m in chat))


def default_rollout_ids() -> list[int]:
    """The failed rollouts (the failures page's list, unfiltered)."""
    from trajectories.forms import FailureFilters
    from trajectories.failures.service import failed_rollouts

    form = FailureFilters({})
    form.is_valid()
    return list(failed_rollouts(form).values_list("pk", flat=True))


def analyze_rollouts(
    rollout_ids: Iterable[int] | None = None, *, judge: str | None = None, rubric_path: str | None = None,
    budget: int = DEFAULT_BUDGET, replace: bool = False, requested_by=None, completion: Callable | None = None,
    on_result: Callable[[RolloutResult], None] | None = None,
) -> list[RolloutResult]:
    """Read each rollout (default: the failed ones); one result per rollout, in order.

    The judge and the rubric are checked first (JudgeError, RubricError: the
    request as a whole is wrong); after that nothing one rollout does stops
    the others.
    """
    settings_ = judge_settings(judge)
    rubric = load_rubric(rubric_path)
    ids = list(dict.fromkeys(rollout_ids)) if rollout_ids else default_rollout_ids()
    found = Rollout.objects.select_related("task").in_bulk(ids)
    results = []
    for pk in ids:
        rollout = found.get(pk)
        if rollout is None:
            result = RolloutResult(pk, FAILED, "no such rollout")
        else:
            try:
                result = analyze_rollout(
                    rollout, settings_, rubric, budget=budget, replace=replace, requested_by=requested_by,
                    completion=completion,
                )
            except Exception as exc:  # noqa: BLE001  (a bug on one rollout must not end the batch)
                logger.exception("analysis of rollout %s failed", pk)
                result = RolloutResult(pk, FAILED, f"{type(exc).__name__}: {exc}")
        results.append(result)
        if on_result is not None:
            on_result(result)
    release_litellm_threads()
    return results


def release_litellm_threads() -> None:
    """End the logging threads litellm leaves after its calls, so the process is single-threaded again.

    A process with other threads imports trials on one process only
    (trajectories.storing.bulk.usable_jobs: a fork copies locks other
    threads may hold), and a Celery worker that ran the judge imports next.
    litellm's executor is a module-level ThreadPoolExecutor its call sites
    hold; it is shut down (its queued logging done, its threads joined) and
    opened again, so the next call starts a thread as the first one did.
    """
    module = sys.modules.get("litellm.litellm_core_utils.thread_pool_executor")
    executor = getattr(module, "executor", None)
    if executor is None or not getattr(executor, "_threads", None):
        return
    try:
        executor.shutdown(wait=True)
        with executor._shutdown_lock:
            executor._threads.clear()
            executor._idle_semaphore = threading.Semaphore(0)
            executor._shutdown = False
    except Exception:  # noqa: BLE001  (litellm's internals changed: its threads stay, imports run on one process)
        logger.warning("litellm's logging threads could not be ended", exc_info=True)
