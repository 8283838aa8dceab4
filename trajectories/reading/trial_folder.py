"""Reading one Harbor trial folder into plain data, without the database.

A Harbor 0.25 or 0.26 trial folder holds `config.json` (TrialConfig), `result.json`
(TrialResult, written only when the trial ends), `agent/trajectory.json`
(ATIF, rewritten after every episode while the agent runs), terminus-2's
summarisation subagents `agent/trajectory.summarization-*.json` and, with
its linear history, the continuations `agent/trajectory.cont-N.json` of the
main trajectory after each summarisation, and `verifier/` (`reward.json`,
`reward.txt`, `test-stdout.txt`, and AutoLab's measured scores such as
`baseline_score.json` and `optimized_score.json`).

The JSON files are read as plain dicts rather than Harbor's pydantic
`TrialResult`: results written by other Harbor versions, or by a verifier
whose reward.json has non-numeric fields, must import all the same. Harbor
0.26's result.json adds `schema_version`, the exception's `policy` and
`reward_valid`, which says whether the reward counts; 0.25's has none of
them (and `failure_cause`, which 0.26 dropped, is not read).
"""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from autolab_site.checksums import tree_checksum
from autolab_site.safe_files import HARD_LINK, open_below, read_file
from tasks.lib.numbers import as_float

import trajectories.provenance as provenance
import trajectories.run_environment as run_environment

from trajectories.reading import analysis_file, harbor_lock, native_formats
from trajectories.reading.atif import (
    AtifError, StreamError, parse_trajectory_data, parse_trajectory_file, parse_trajectory_stream, stream_steps,
)
from trajectories.reading.json_data import (
    BIGINT_LIMIT, JsonFileError, clean_json, clean_text, parse_timestamp, read_json_object, read_storable_json, storable_int,
)
from trajectories.reading.masked import mask_folder
from trajectories.reading.parsed import ParsedStep, ParsedTrajectory

PHASES = ("environment_setup", "agent_setup", "agent_execution", "verifier")
# terminus-2's linear-history continuations of the main trajectory.
CONTINUATION = re.compile(r"trajectory\.cont-(\d+)\.json")
# AutoLab's score files are a few KB; anything near this is not a score.
VERIFIER_OUTPUT_LIMIT = 256 * 1024
# A live trajectory may be caught mid-rewrite: retry a few times.
LIVE_READ_ATTEMPTS = 5
LIVE_READ_DELAY = 0.05
# Files that change on every look at a live trial but say nothing about its
# content (Harbor's lock, terminal recordings); left out of the checksum.
CHECKSUM_IGNORED = re.compile(r"(^|/)(lock\.json|\.DS_Store)$")
STDOUT_LIMIT = 2_000_000
# A trial folder holds at least one of these.
TRIAL_FILES = ("config.json", "result.json", "agent/trajectory.json")
# The files read_trial_folder decodes whole (besides agent/trajectory.*.json).
DECODED_FILES = frozenset({
    "config.json", "result.json", "agent/trajectory.json", "verifier/reward.json", "analysis.json", provenance.FILE_NAME,
    run_environment.FILE_NAME,
})


class TrialFolderError(ValueError):
    """A trial folder that cannot be imported; names the file at fault."""

    def __init__(self, source: str, problem: str):
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


@dataclass
class Phase:
    started_at: datetime | None = None
    finished_at: datetime | None = None


@dataclass
class TrialFolder:
    path: Path
    trial_name: str
    task_name: str
    trial_id: str = ""
    job_id: str = ""
    finished: bool = False  # result.json exists
    config: dict[str, Any] = field(default_factory=dict)

    agent_name: str = ""
    agent_version: str = ""
    agent_import_path: str = ""
    model_name: str = ""  # as recorded, possibly with a provider prefix
    model_provider: str = ""

    started_at: datetime | None = None
    finished_at: datetime | None = None
    phases: dict[str, Phase] = field(default_factory=dict)

    n_input_tokens: int | None = None
    n_cache_tokens: int | None = None
    n_output_tokens: int | None = None
    cost_usd: float | None = None
    n_episodes: int | None = None
    api_request_times_msec: list[float] = field(default_factory=list)

    exception_type: str = ""
    exception_message: str = ""
    exception_traceback: str = ""

    reward: float | None = None
    # Harbor 0.26's verdict on whether the reward counts (result.json
    # `reward_valid`); None for results that do not say (Harbor 0.25).
    reward_valid: bool | None = None
    # result.json's `schema_version` (Harbor 0.26 writes 1; absent before).
    result_schema_version: int | None = None
    # result.json's `verifier_environment_mode` (Harbor 0.26): "separate", "shared", or "" when it does not say.
    verifier_mode: str = ""
    verifier_fields: dict[str, Any] = field(default_factory=dict)
    verifier_stdout: str = ""
    # The verifier's other JSON files by name ("optimized_score.json": {...}).
    verifier_outputs: dict[str, Any] = field(default_factory=dict)

    trajectory: ParsedTrajectory | None = None
    # Where the steps come from: "atif" (agent/trajectory.json), "converted from
    # <native format>" (Harbor's converter, run at import), or "none".
    trajectory_format: str = ""
    # terminus-2 summarisation subagents saved beside the main trajectory.
    subtrajectory_files: dict[str, ParsedTrajectory] = field(default_factory=dict)
    checksum: str = ""
    warnings: list[str] = field(default_factory=list)
    # Intermediate scores read from the log itself (Inspect's score events):
    # [{"t": elapsed sec, "score": s, "raw": y}]. Harbor trials bring theirs in
    # the verifier's score_log.json instead (see score_log_entries).
    score_log: list[dict[str, Any]] = field(default_factory=list)
    # Why the source leaves this run out of its own figures ("" when it counts):
    # Inspect does not score a sample that errored, nor count it as 0.
    excluded: str = ""
    # Harbor's `harbor analyze` reading of this trial (analysis.json), when the folder holds one;
    # `analysis_error` says why a file there could not be read (the trial imports all the same).
    analysis: analysis_file.TrialAnalysis | None = None
    analysis_error: str = ""
    # Where its usage and steps come from (our runner's provenance file; an imported folder's own report else).
    provenance: provenance.Provenance = provenance.IMPORTED
    # The image it ran in, and the base images our sandbox substituted (trajectories.run_environment); {} unknown.
    environment: dict[str, Any] = field(default_factory=dict)
    # What it ran with: Harbor's lock.json and config.json read once (trajectories.reading.harbor_lock).
    run_settings: harbor_lock.RunSettings = field(default_factory=harbor_lock.RunSettings)
    # SHA-256 of agent/trajectory.json's bytes ("" without one): the same trajectory sent twice has the same.
    trajectory_sha256: str = ""

    @property
    def agent_started_at(self) -> datetime | None:
        """When the agent started: Harbor's timing, else the first step."""
        phase = self.phases.get("agent_execution")
        if phase and phase.started_at:
            return phase.started_at
        if self.trajectory:
            for step in self.trajectory.steps:
                if step.timestamp:
                    return step.timestamp
        return None


SCORE_LOG_FILE = "score_log.json"


def score_log_entries(folder: TrialFolder) -> list[dict[str, Any]]:
    """The run's score log: the log's own, else the verifier's score_log.json ({"entries": [{"at", "raw", "score"}]}).

    A task's scoring tool stamps each entry with the Unix time it scored;
    the elapsed time is counted from the agent's start. Entries without a
    usable time or score are skipped; the result is ordered by time.
    """
    if folder.score_log:
        return sorted(folder.score_log, key=lambda e: e["t"])
    data = folder.verifier_outputs.get(SCORE_LOG_FILE)
    entries = data.get("entries") if isinstance(data, dict) else None
    start = folder.agent_started_at
    if not isinstance(entries, list) or start is None:
        return []
    origin = start.timestamp() if start.tzinfo else start.replace(tzinfo=timezone.utc).timestamp()
    found = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        at, score, raw = entry.get("at"), entry.get("score"), entry.get("raw")
        if as_float(at) is None or as_float(score) is None:
            continue
        raw = raw if as_float(raw) is not None else None
        found.append({"t": max(0.0, at - origin), "score": float(score), "raw": raw})
    return sorted(found, key=lambda e: e["t"])


def is_trial_dir(path: Path) -> bool:
    """Whether `path` is one trial's folder (not a job folder above trials).

    A Harbor job folder has a config.json and result.json of its own
    (JobConfig with `job_name`, JobResult with `n_total_trials`); a trial's
    name the trial (`trial_name`). A file that cannot be read counts as a
    trial's, so that its error is reported rather than the folder skipped.
    """
    path = Path(path)
    if not path.is_dir() or path.is_symlink():
        return False
    if _is_regular(path / "agent" / "trajectory.json"):
        return True
    for name in ("config.json", "result.json"):
        if _is_regular(path / name):
            try:
                data = read_json_object(path / name, first_read=read_file(path, name))
            except (JsonFileError, OSError):
                return True
            if "trial_name" in data or ("task" in data and "job_name" not in data):
                return True
    return False


def find_trial_dirs(root: Path) -> list[Path]:
    """Every trial folder at or below `root` (a trial, a job, a folder of jobs).

    The walk does not descend into a trial folder, and skips hidden folders.
    Sorted, so that imports and their reports are in a stable order.
    """
    root = Path(root)
    if is_trial_dir(root):
        return [root]
    found: list[Path] = []
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            children = sorted(p for p in current.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            continue
        for child in children:
            if child.name.startswith("."):
                continue
            if is_trial_dir(child):
                found.append(child)
            else:
                stack.append(child)
    return sorted(found)


@dataclass(frozen=True)
class FolderSnapshot:
    """A trial folder's checksum, with the bytes of the JSON files the reader decodes.

    An import takes a snapshot first (to skip an unchanged trial by its
    checksum) and then reads the trial from it, so the files are read once
    and the trial read is the very content the checksum covers. `names`
    are its regular files, the only ones the reader opens; `links` its
    links and special files, which it refuses: a trial folder is written
    by an agent's sandbox, and a link there may point at any host file.
    """

    path: str
    checksum: str
    files: dict[str, bytes]
    names: frozenset[str] = frozenset()
    links: tuple[str, ...] = ()
    # Files too large to hold (snapshot_folder's `stream_large`): their SHA-256, for a reader that streams them.
    digests: dict[str, str] = field(default_factory=dict)
    # Regular files with a second name (a hard link may name any file of the filesystem): refused as links are.
    hard_links: tuple[str, ...] = ()


# A main trajectory larger than this is read step by step, when the caller allows (snapshot_folder's `stream_large`).
STREAM_OVER = 16 * 1024 * 1024


def snapshot_folder(path: Path, *, stream_large: bool = False) -> FolderSnapshot:
    """One walk of the trial folder: its content checksum (Harbor's lock.json is not content) and its JSON bytes.

    With `stream_large`, an agent/trajectory.json larger than STREAM_OVER
    bytes is not held: the snapshot keeps its digest, and the reader streams
    it from the file, checking it reads the bytes the checksum covers. For
    a finished trial only: a live one's file is rewritten as it runs.
    """
    files: dict[str, bytes] = {}
    names: set[str] = set()
    links: list[str] = []
    digests: dict[str, str] = {}
    hard_links: list[str] = []

    def too_large(relative: str, size: int) -> bool:
        return stream_large and relative == MAIN_TRAJECTORY and size > STREAM_OVER

    checksum = tree_checksum(
        path, _not_content, keep=_decoded_by_reader, kept=files, names=names, links=links,
        digest_instead=too_large, digests=digests, hard_links=hard_links,
    )
    return FolderSnapshot(
        os.fspath(path), checksum, files, frozenset(names), tuple(sorted(links)), digests, tuple(hard_links),
    )


def _not_content(relative: str) -> bool:
    return bool(CHECKSUM_IGNORED.search(relative))


def _decoded_by_reader(relative: str) -> bool:
    if relative in DECODED_FILES:
        return True
    folder, _, name = relative.rpartition("/")
    return folder == "agent" and is_subtrajectory_file(name)


def is_subtrajectory_file(name: str) -> bool:
    """agent/trajectory.*.json: summarisation subagents and continuations (what the glob would match)."""
    return name.startswith("trajectory.") and name.endswith(".json") and len(name) >= len("trajectory..json")


def peek_trial_name(path: Path, snapshot: FolderSnapshot) -> str:
    """The trial's name as config.json or result.json gives it in `snapshot` (else the folder's), without reading the trial.

    Enough for an import to find the trial's stored row, and skip a trial
    whose checksum has not changed.
    """
    for name in ("config.json", "result.json"):
        if name in snapshot.files:
            try:
                data = read_json_object(path / name, first_read=snapshot.files[name])
            except JsonFileError:
                continue
            if isinstance(data.get("trial_name"), str):
                return data["trial_name"]
    return path.name


def read_trial_folder(
    path: Path, *, live: bool = False, snapshot: FolderSnapshot | None = None, consume: bool = False,
) -> TrialFolder:
    """Everything the database keeps about the trial in `path`.

    Raises TrialFolderError (naming the file) for files that exist but cannot
    be read. A folder without result.json is a trial still running: its
    trajectory is read with retries and the result fields stay empty.
    `consume` drops each trajectory file's bytes from `snapshot` as soon as
    they are decoded, for a caller that needs them no more: the bytes of a
    long trajectory and its decoded form are then not held together.
    """
    path = Path(path)
    if not path.is_dir():
        raise TrialFolderError(str(path), "is not a folder")
    if snapshot is None:
        # A wrong path may be a big tree: walk it only if it holds a trial.
        if not any(_is_regular(path / name) for name in TRIAL_FILES):
            raise _not_a_trial_folder(path)
        snapshot = snapshot_folder(path)
    elif snapshot.path != os.fspath(path):
        raise ValueError(f"a snapshot of {snapshot.path} cannot be read as {path}")
    checksum = snapshot.checksum
    config = _json_object(path, "config.json", snapshot)
    result = _json_object(path, "result.json", snapshot)
    if config is None and result is None and "agent/trajectory.json" not in snapshot.names:
        raise _not_a_trial_folder(path)
    finished = result is not None  # result.json exists (and is a JSON object)
    config = config if config is not None else (result or {}).get("config") or {}
    if not isinstance(config, dict):
        config = {}
    result = result or {}

    trial_name = clean_text(config.get("trial_name") or result.get("trial_name") or path.name)
    folder = TrialFolder(
        path=path,
        trial_name=trial_name,
        task_name=_task_name(config, result, trial_name),
        trial_id=clean_text(result.get("id")),
        job_id=clean_text(config.get("job_id")),
        finished=finished,
        config=clean_json(config),
        checksum=checksum,
    )
    folder.warnings.extend(refusals(snapshot))
    folder.provenance = _read_provenance(folder, snapshot)
    folder.environment = _read_environment(folder, snapshot)
    _read_agent(folder, config, result)
    _read_result(folder, result)
    _read_verifier(folder, result, snapshot)
    folder.run_settings = harbor_lock.read_settings(_lock_object(folder, path), config, result)
    folder.trajectory_sha256 = _trajectory_digest(path, snapshot)
    _read_trajectories(folder, _harness_files(folder, snapshot), live=live or not folder.finished, consume=consume)
    _agent_version_from_trajectory(folder)
    _read_analysis(folder, snapshot)
    if not folder.exception_type and "exception.txt" in snapshot.names:
        text = _read_text(path, "exception.txt")
        folder.exception_traceback = text
        folder.exception_type = _exception_type_from_traceback(text)
    mask_folder(folder)
    return folder


# -- Pieces ---------------------------------------------------------------------


def _lock_object(folder: TrialFolder, path: Path) -> dict | None:
    """Harbor's lock.json (left out of the checksum, read apart); None without one, a warning when unreadable."""
    if not _is_regular(path / harbor_lock.FILE_NAME):
        return None
    try:
        return read_json_object(path / harbor_lock.FILE_NAME, first_read=read_file(path, harbor_lock.FILE_NAME))
    except (OSError, JsonFileError) as exc:
        folder.warnings.append(f"{harbor_lock.FILE_NAME}: cannot be read ({exc}); its settings are taken from config.json")
        return None


def _trajectory_digest(path: Path, snapshot: FolderSnapshot) -> str:
    if MAIN_TRAJECTORY in snapshot.digests:
        return snapshot.digests[MAIN_TRAJECTORY]
    raw = snapshot.files.get(MAIN_TRAJECTORY)
    return hashlib.sha256(raw).hexdigest() if raw is not None else ""


def refusals(snapshot: FolderSnapshot) -> list[str]:
    """The import's warnings for the files it refused to open: links, special files, hard links."""
    return [
        *(f"{link}: a symbolic link or special file, refused (not read)" for link in snapshot.links),
        *(f"{name}: {HARD_LINK}, refused (not read)" for name in snapshot.hard_links),
    ]


def _read_provenance(folder: TrialFolder, snapshot: FolderSnapshot) -> provenance.Provenance:
    """Our runner's word on where the trial's usage and steps come from; an imported folder's own report without it.

    The file lies at the folder's root, where no sandbox writes. One that
    cannot be read is said so, and the trial counts as imported.
    """
    raw = snapshot.files.get(provenance.FILE_NAME)
    if raw is None:
        return provenance.IMPORTED
    try:
        return provenance.parse(raw)
    except provenance.ProvenanceError as exc:
        folder.warnings.append(f"{exc}; its usage and steps are taken as the trial reports them")
        return provenance.IMPORTED


def _read_environment(folder: TrialFolder, snapshot: FolderSnapshot) -> dict[str, Any]:
    """Our sandbox's record of the image the trial ran in; {} for a folder without one (or one that cannot be read)."""
    raw = snapshot.files.get(run_environment.FILE_NAME)
    if raw is None:
        return {}
    try:
        return run_environment.parse(raw)
    except run_environment.RunEnvironmentError as exc:
        folder.warnings.append(str(exc))
        return {}


def _harness_files(folder: TrialFolder, snapshot: FolderSnapshot) -> FolderSnapshot:
    """The snapshot the trajectory reader sees: without agent/ files copied from the sandbox, when the harness
    writes its trajectory on the host (a trajectory.cont-1.json planted in /logs/agent is not the harness's)."""
    refused = folder.provenance.sandbox_agent_files(snapshot.names)
    if not refused:
        return snapshot
    folder.warnings.extend(
        f"{name}: copied from the agent's sandbox, where the harness writes its trajectory on the host: not read"
        for name in refused if _is_trajectory_name(name)
    )
    return replace(snapshot, names=snapshot.names - set(refused))


def _is_trajectory_name(relative: str) -> bool:
    folder, _, name = relative.rpartition("/")
    return folder == "agent" and (name == "trajectory.json" or is_subtrajectory_file(name))


def _not_a_trial_folder(path: Path) -> TrialFolderError:
    return TrialFolderError(str(path), "is not a Harbor trial folder (no config.json, result.json or agent/trajectory.json)")


def _is_regular(path: Path) -> bool:
    """A regular file, not a link to one."""
    try:
        return path.lstat().st_mode & 0o170000 == 0o100000
    except OSError:
        return False


def _reader(folder: Path, relative: str, limit: int | None = None):
    """Reads folder/relative without following a link anywhere below `folder`."""
    return lambda: read_file(folder, relative, limit=limit)


def _json_object(folder: Path, relative: str, snapshot: FolderSnapshot) -> dict | None:
    """The JSON object in folder/relative, None when there is no such file."""
    path = folder / relative
    raw = snapshot.files.get(relative)
    if raw is None and relative not in snapshot.names:
        return None
    try:
        if raw is None:
            raw = read_file(folder, relative)
        return read_json_object(path, first_read=raw)
    except OSError as exc:
        raise TrialFolderError(str(path), f"cannot be read ({exc.strerror or exc})") from exc
    except JsonFileError as exc:
        raise TrialFolderError(str(path), exc.problem) from exc


def _task_name(config: dict, result: dict, trial_name: str) -> str:
    if isinstance(result.get("task_name"), str) and result["task_name"]:
        return result["task_name"]
    task = config.get("task") if isinstance(config.get("task"), dict) else {}
    for key in ("path", "name"):
        value = task.get(key)
        if isinstance(value, str) and value.strip("/"):
            return value.rstrip("/").rsplit("/", 1)[-1]
    # Harbor names trials "<task>__<7-char id>".
    head, sep, _ = trial_name.rpartition("__")
    return head if sep else trial_name


def _read_agent(folder: TrialFolder, config: dict, result: dict) -> None:
    agent_config = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    info = result.get("agent_info") if isinstance(result.get("agent_info"), dict) else {}
    model_info = info.get("model_info") if isinstance(info.get("model_info"), dict) else {}
    folder.agent_name = clean_text(info.get("name") or agent_config.get("name") or agent_config.get("import_path"))
    folder.agent_version = clean_text(info.get("version"))
    folder.agent_import_path = clean_text(agent_config.get("import_path"))
    folder.model_name = clean_text(model_info.get("name") or agent_config.get("model_name"))
    provider = model_info.get("provider")
    if not provider and "/" in clean_text(agent_config.get("model_name")):
        provider = agent_config["model_name"].split("/", 1)[0]
    folder.model_provider = clean_text(provider)


def _agent_version_from_trajectory(folder: TrialFolder) -> None:
    """The agent's version as its trajectory names it, when result.json does not (a trial still running,
    or a copy without it): else the import takes the newest harness of that name, perhaps another's."""
    trajectory = folder.trajectory
    if folder.agent_version or trajectory is None or not trajectory.agent_version:
        return
    if not folder.agent_name or folder.agent_name == trajectory.agent_name:
        folder.agent_name = folder.agent_name or trajectory.agent_name
        folder.agent_version = trajectory.agent_version


def _read_result(folder: TrialFolder, result: dict) -> None:
    folder.started_at = parse_timestamp(result.get("started_at"))
    folder.finished_at = parse_timestamp(result.get("finished_at"))
    for name in PHASES:
        timing = result.get(name) if isinstance(result.get(name), dict) else {}
        folder.phases[name] = Phase(parse_timestamp(timing.get("started_at")), parse_timestamp(timing.get("finished_at")))

    agent_result = result.get("agent_result") if isinstance(result.get("agent_result"), dict) else {}
    folder.n_input_tokens = storable_int(agent_result.get("n_input_tokens"), BIGINT_LIMIT)
    folder.n_cache_tokens = storable_int(agent_result.get("n_cache_tokens"), BIGINT_LIMIT)
    folder.n_output_tokens = storable_int(agent_result.get("n_output_tokens"), BIGINT_LIMIT)
    folder.cost_usd = as_float(agent_result.get("cost_usd"))
    metadata = agent_result.get("metadata") if isinstance(agent_result.get("metadata"), dict) else {}
    episodes = storable_int(metadata.get("n_episodes"), BIGINT_LIMIT)
    folder.n_episodes = episodes if episodes is not None and 0 <= episodes < 2**31 else None
    times = metadata.get("api_request_times_msec")
    if isinstance(times, list):
        folder.api_request_times_msec = [value for value in (as_float(t) for t in times) if value is not None]

    exception = result.get("exception_info")
    if isinstance(exception, dict):
        folder.exception_type = clean_text(exception.get("exception_type"))[:200]
        folder.exception_message = clean_text(exception.get("exception_message"))
        folder.exception_traceback = clean_text(exception.get("exception_traceback"))
    if isinstance(result.get("reward_valid"), bool):
        folder.reward_valid = result["reward_valid"]
    if result.get("verifier_environment_mode") in ("separate", "shared"):
        folder.verifier_mode = result["verifier_environment_mode"]
    version = result.get("schema_version")
    folder.result_schema_version = version if isinstance(version, int) and not isinstance(version, bool) else None


def _read_verifier(folder: TrialFolder, result: dict, snapshot: FolderSnapshot) -> None:
    """Reward and every reward.json field, numeric or not.

    Harbor keeps only numbers in result.json's `verifier_result.rewards` (and
    refuses the file outright when a field is not numeric), so reward.json
    itself is the source of truth; result.json and reward.txt fill gaps.
    """
    fields: dict[str, Any] = {}
    verifier_result = result.get("verifier_result") if isinstance(result.get("verifier_result"), dict) else {}
    if isinstance(verifier_result.get("rewards"), dict):
        fields.update(verifier_result["rewards"])
    reward_json = _json_object(folder.path, "verifier/reward.json", snapshot)
    if reward_json is not None:
        fields.update(reward_json)
    folder.verifier_fields = clean_json(fields)

    # A pass/fail verifier may write true or false.
    reward = as_float(fields.get("reward"), booleans=True)
    # reward.txt fills a gap, never a value that is there but unreadable (a damaged file is said so below).
    if reward is None and fields.get("reward") is None and "verifier/reward.txt" in snapshot.names:
        try:
            reward = as_float(float(_read_text(folder.path, "verifier/reward.txt").strip()))
        except ValueError:
            folder.warnings.append(f"{folder.path / 'verifier' / 'reward.txt'}: not a number")
    if reward is None and fields.get("reward") is not None:
        # Else the page shows an unscored rollout with no reason.
        value = fields["reward"]
        shown = f"{value:g}" if isinstance(value, float) else repr(value)[:200]
        folder.warnings.append(f"verifier/reward.json: its reward {shown} is not a finite number; the trial has no reward")
    if reward is not None and folder.reward_valid is False:
        # Harbor 0.26 says this reward does not count (the trial's exception
        # voids it): it stays among the verifier's fields, not as the reward.
        why = f" ({folder.exception_type})" if folder.exception_type else ""
        folder.warnings.append(f"result.json: Harbor marks the reward {reward:g} invalid{why}; it is kept but not counted")
        reward = None
    folder.reward = reward
    if "verifier/test-stdout.txt" in snapshot.names:
        folder.verifier_stdout = _read_text(folder.path, "verifier/test-stdout.txt")
    _read_verifier_outputs(folder, snapshot)


def _read_verifier_outputs(folder: TrialFolder, snapshot: FolderSnapshot) -> None:
    """Every other JSON file the verifier wrote: AutoLab's measured baseline
    and optimised scores, with their component metrics.

    A file that is too large or not JSON is left out with a warning; it
    never fails the import, as the reward does not depend on it.
    """
    for relative in sorted(snapshot.names):
        folder_name, _, name = relative.partition("/")
        if folder_name != "verifier" or "/" in name or not name.endswith(".json") or name == "reward.json":
            continue
        try:
            raw = read_file(folder.path, relative, limit=VERIFIER_OUTPUT_LIMIT + 1)
        except OSError as exc:
            folder.warnings.append(f"{relative}: cannot be read ({exc.strerror or exc})")
            continue
        if len(raw) > VERIFIER_OUTPUT_LIMIT:
            folder.warnings.append(f"{relative}: larger than {VERIFIER_OUTPUT_LIMIT // 1024} KB, not kept")
            continue
        try:
            folder.verifier_outputs[name] = read_storable_json(folder.path / relative, first_read=raw)
        except JsonFileError as exc:
            folder.warnings.append(f"{relative}: {exc.problem}")


def _read_analysis(folder: TrialFolder, snapshot: FolderSnapshot) -> None:
    """Harbor's analysis.json, if any: a reading, or the reason it is not one (a warning, never a refusal)."""
    name = analysis_file.FILE_NAME
    if name not in snapshot.names:
        return
    try:
        raw = snapshot.files.get(name)
        if raw is None:
            raw = read_file(folder.path, name)
        folder.analysis = analysis_file.read_trial_file(raw)
    except (analysis_file.AnalysisFileError, OSError) as exc:
        folder.analysis_error = str(exc) if isinstance(exc, analysis_file.AnalysisFileError) else f"{name}: cannot be read ({exc})"
        folder.warnings.append(f"{folder.analysis_error}; Harbor's analysis is not shown")


def _read_trajectories(folder: TrialFolder, snapshot: FolderSnapshot, *, live: bool, consume: bool = False) -> None:
    agent_dir = folder.path / "agent"
    main = agent_dir / "trajectory.json"
    attempts = LIVE_READ_ATTEMPTS if live else 1
    # The bytes are handed over, not kept here: parse_trajectory_file lets them go once decoded.
    take = snapshot.files.pop if consume else snapshot.files.get
    if MAIN_TRAJECTORY in snapshot.names:
        try:
            if MAIN_TRAJECTORY in snapshot.digests:
                # Without its text when no continuation file joins its steps (_join_continuations reads them).
                keep_text = bool(_subtrajectory_files(agent_dir, snapshot))
                folder.trajectory = _read_large_trajectory(folder.path, snapshot.digests[MAIN_TRAJECTORY], keep_text=keep_text)
            else:
                folder.trajectory = parse_trajectory_file(
                    main, attempts=attempts, delay=LIVE_READ_DELAY, first_read=take(MAIN_TRAJECTORY, None),
                    read=_reader(folder.path, MAIN_TRAJECTORY),
                )
        except AtifError as exc:
            if not _read_misplaced_native_log(folder, snapshot):
                raise TrialFolderError(exc.source, exc.problem) from exc
        if folder.trajectory is not None:
            folder.warnings.extend(f"{main.name}: {w}" for w in folder.trajectory.warnings)
    continuations: dict[int, ParsedTrajectory] = {}
    for sub in _subtrajectory_files(agent_dir, snapshot):
        relative = f"agent/{sub.name}"
        try:
            parsed = parse_trajectory_file(
                sub, attempts=attempts, delay=LIVE_READ_DELAY, first_read=take(relative, None),
                read=_reader(folder.path, relative),
            )
        except AtifError as exc:
            raise TrialFolderError(exc.source, exc.problem) from exc
        folder.warnings.extend(f"{sub.name}: {w}" for w in parsed.warnings)
        match = CONTINUATION.fullmatch(sub.name)
        if match and folder.trajectory is not None:
            continuations[int(match.group(1))] = parsed
        else:
            folder.subtrajectory_files[sub.name] = parsed
    if continuations:
        _join_continuations(folder, continuations)
    if folder.trajectory_format:
        return  # agent/trajectory.json was a harness's own log: converted, or said why not
    if folder.trajectory is not None:
        folder.trajectory_format = "atif"
    elif folder.finished:
        _read_native_logs(folder, snapshot)


MAIN_TRAJECTORY = "agent/trajectory.json"


class _HashingFile:
    """A file read through, its SHA-256 taken on the way (the bytes a snapshot's digest covers)."""

    def __init__(self, folder: Path, relative: str):
        self.file = os.fdopen(open_below(folder, relative), "rb")
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.file.read(size)
        self.digest.update(data)
        return data

    def __enter__(self) -> _HashingFile:
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()


def _read_large_trajectory(path: Path, digest: str, *, keep_text: bool) -> ParsedTrajectory:
    """agent/trajectory.json read step by step from the file, which must hold the bytes the snapshot's checksum covers.

    Without `keep_text` the steps come without their text, and the
    trajectory's `restream` reads it again, step by step, for the importer
    to analyse and store a batch at a time (it checks the file is still the
    one read here). A file the stream cannot read is read whole instead
    (the error, or the repair of bytes that are not UTF-8, is then the
    usual one), with its text.
    """
    source = str(path / MAIN_TRAJECTORY)
    opened: list[_HashingFile] = []

    def open_file() -> _HashingFile:
        opened.append(_HashingFile(path, MAIN_TRAJECTORY))
        return opened[-1]

    try:
        trajectory = parse_trajectory_stream(open_file, source=source, keep_text=keep_text)
        read_digest = opened[-1].digest.hexdigest()
        if not keep_text:
            trajectory.restream = _restream(path, digest, trajectory.steps)
    except StreamError:
        try:
            raw = read_file(path, MAIN_TRAJECTORY)
        except OSError as exc:
            raise TrialFolderError(source, f"cannot be read ({exc.strerror or exc})") from exc
        read_digest = hashlib.sha256(raw).hexdigest()
        trajectory = None if read_digest != digest else parse_trajectory_file(Path(source), first_read=raw)
    except OSError as exc:
        raise TrialFolderError(source, f"cannot be read ({exc.strerror or exc})") from exc
    if read_digest != digest:
        raise TrialFolderError(source, "changed while it was being read; import the trial again")
    return trajectory


def _restream(path: Path, digest: str, known: list[ParsedStep]) -> Callable[[Callable[[int, ParsedStep], None]], None]:
    """A reader of the full steps of a trajectory first read without_text, as ParsedTrajectory.restream.

    Each step gets the number (and atif_step_id) the first read gave it.
    A file rewritten since (other bytes, other steps) raises
    TrialFolderError; an importer raising it inside its transaction stores
    nothing.
    """
    source = str(path / MAIN_TRAJECTORY)

    def changed() -> TrialFolderError:
        return TrialFolderError(source, "changed while it was being read; import the trial again")

    def restream(on_step: Callable[[int, ParsedStep], None]) -> None:
        def checked(position: int, step: ParsedStep) -> None:
            first = known[position] if position < len(known) else None
            if first is None or (step.source, step.timestamp) != (first.source, first.timestamp):
                raise changed()
            step.step_id, step.extra = first.step_id, first.extra
            on_step(position, step)

        opened = _HashingFile(path, MAIN_TRAJECTORY)
        try:
            count = stream_steps(lambda: opened, checked)
        except (ValueError, RecursionError, OSError) as exc:  # a file that the first read could read
            raise changed() from exc
        if count != len(known) or opened.digest.hexdigest() != digest:
            raise changed()

    return restream


def _read_misplaced_native_log(folder: TrialFolder, snapshot: FolderSnapshot) -> bool:
    """agent/trajectory.json that is a harness's own log, not ATIF: converted, or no trajectory with its format named.

    False when it is no log we know: the trial is refused, naming the file, as before.
    """
    try:
        raw = snapshot.files.get("agent/trajectory.json") or read_file(folder.path, "agent/trajectory.json")
    except OSError:
        return False
    found = native_formats.misplaced(raw)
    if found is None:
        return False
    fmt, files = found
    try:
        data = native_formats.convert(folder.path, fmt, set(files), model_name=folder.model_name, read=files.__getitem__)
        folder.trajectory = parse_trajectory_data(data, source=f"agent/trajectory.json ({fmt.name})")
    except (native_formats.ConversionError, AtifError) as exc:
        folder.trajectory_format = "none"
        folder.warnings.append(
            f"no trajectory: agent/trajectory.json is a {fmt.name}, not an ATIF trajectory, and it could not be "
            f"converted ({exc}); the reward and result are imported without steps"[:400]
        )
        return True
    folder.trajectory_format = f"converted from {fmt.name}"
    folder.warnings.append(
        f"agent/trajectory.json is a {fmt.name}, not an ATIF trajectory: converted by Harbor "
        f"{native_formats.harbor_version()}'s converter"
    )
    return True


def _read_native_logs(folder: TrialFolder, snapshot: FolderSnapshot) -> None:
    """A finished trial without agent/trajectory.json: convert its harness's own logs, or say there are none.

    Only ended trials: while an agent runs, Harbor has not converted yet,
    and the runner imports again when it ends.
    """
    fmt = native_formats.detect(snapshot.names)
    if fmt is None:
        folder.trajectory_format = "none"
        has_agent = any(name.startswith("agent/") for name in snapshot.names)
        where = "agent/ holds no trajectory.json and no agent log we know" if has_agent else "there is no agent/ folder"
        folder.warnings.append(f"no trajectory: {where}; the reward and result are imported without steps")
        return
    try:
        data = native_formats.convert(
            folder.path, fmt, snapshot.names, model_name=folder.model_name,
            read=lambda relative: read_file(folder.path, relative),
        )
        parsed = parse_trajectory_data(data, source=f"agent/ ({fmt.name})")
    except (native_formats.ConversionError, AtifError, OSError) as exc:
        folder.trajectory_format = "none"
        folder.warnings.append(
            f"no trajectory: agent/ holds a {fmt.name} but no trajectory.json, and it could not be converted "
            f"({exc}); the reward and result are imported without steps"[:400]
        )
        return
    folder.trajectory = parsed
    folder.trajectory_format = f"converted from {fmt.name}"
    folder.warnings.append(
        f"agent/trajectory.json is missing: converted from the {fmt.name} by Harbor {native_formats.harbor_version()}'s converter"
    )
    folder.warnings.extend(f"converted trajectory: {w}" for w in parsed.warnings)


def _join_continuations(folder: TrialFolder, continuations: dict[int, ParsedTrajectory]) -> None:
    """Append terminus-2's continuation files to the main trajectory.

    With linear history, terminus-2 closes trajectory.json at its first
    summarisation and goes on in trajectory.cont-1.json, then cont-2, ...
    Each continuation starts with the earlier conversation again, marked
    `is_copied_context`; those steps are left out. The rest restart their
    step ids, so they are numbered on from the main trajectory's last and
    keep their own id and file in `extra["continuation"]`. The copied
    context ends with the handoff prompt holding the summary and answers,
    which no earlier file has: copied steps are left out only when an
    earlier file holds the same message. Final metrics are the run's totals, so the
    last file's are kept.
    """
    main = folder.trajectory
    expected = 1
    seen = {(step.source, step.message) for step in main.steps}
    for index in sorted(continuations):
        if index != expected:
            folder.warnings.append(f"trajectory.cont-{expected}.json is missing; steps after it may be out of order")
        expected = index + 1
        part = continuations[index]
        last_id = max((step.step_id for step in main.steps), default=0)
        for step in part.steps:
            copied = bool(step.extra.get("is_copied_context"))
            # Copied context the earlier files already hold is left out; the
            # handoff prompt with the answers the continuation acts on is
            # copied context too, but no earlier file has it: it is kept.
            if copied and (step.source, step.message) in seen:
                continue
            seen.add((step.source, step.message))
            last_id += 1
            where = {"file": f"trajectory.cont-{index}.json", "step_id": step.step_id}
            if copied:
                where["copied_context"] = True
            step.extra = dict(step.extra, continuation=where)
            step.step_id = last_id
            main.steps.append(step)
        if part.final_metrics:
            main.final_metrics = part.final_metrics
        main.subagents.extend(part.subagents)


def _subtrajectory_files(agent_dir: Path, snapshot: FolderSnapshot) -> list[Path]:
    """agent/trajectory.*.json, sorted by name (what glob would find, without its pattern machinery)."""
    names = [relative[len("agent/"):] for relative in snapshot.names if relative.startswith("agent/")]
    return [agent_dir / name for name in sorted(names) if "/" not in name and is_subtrajectory_file(name)]


def _read_text(folder: Path, relative: str) -> str:
    try:
        raw = read_file(folder, relative, limit=STDOUT_LIMIT + 1)
    except OSError as exc:
        raise TrialFolderError(str(folder / relative), f"cannot be read ({exc.strerror or exc})") from exc
    text = clean_text(raw[:STDOUT_LIMIT].decode("utf-8", "replace"))
    if len(raw) > STDOUT_LIMIT:
        text += "\n[... truncated]"
    return text


def _exception_type_from_traceback(text: str) -> str:
    """The exception class on the last 'Name: message' line of a traceback."""
    for line in reversed(text.strip().splitlines()):
        match = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout\w*|Interrupt))\b", line.strip())
        if match:
            return match.group(1).rsplit(".", 1)[-1][:200]
    return ""




# What a verifier run leaves that a grade keeps (a regrade's folder holds copies of the source's agent/ and artifacts/).
def _not_verification(relative: str) -> bool:
    return not (relative in ("config.json", "result.json") or relative.startswith("verifier/"))


@dataclass(frozen=True)
class Verification:
    """A verifier run's verdict, read as an import reads it: the reward (voided when Harbor says it does not count), every field."""

    reward: float | None
    reward_valid: bool | None
    fields: dict[str, Any]
    stdout: str
    outputs: dict[str, Any]
    exception_type: str
    exception_message: str
    warnings: tuple[str, ...]

    def score_log(self, agent_started_at: datetime | None) -> list[dict[str, Any]]:
        """The verifier's score log, its times counted from the agent's start in the graded run."""
        folder = TrialFolder(path=Path("."), trial_name="", task_name="", verifier_outputs=self.outputs)
        folder.phases["agent_execution"] = Phase(agent_started_at)
        return score_log_entries(folder)


def read_verification(path: Path) -> Verification:
    """The verdict in a trial folder's result.json and verifier/ only (nothing else of it is read or walked into)."""
    path = Path(path)
    files: dict[str, bytes] = {}
    names: set[str] = set()
    links: list[str] = []
    hard_links: list[str] = []
    checksum = tree_checksum(
        path, _not_verification, keep=_decoded_by_reader, kept=files, names=names, links=links, hard_links=hard_links,
    )
    snapshot = FolderSnapshot(
        os.fspath(path), checksum, files, frozenset(names), tuple(sorted(links)), hard_links=tuple(hard_links),
    )
    result = _json_object(path, "result.json", snapshot) or {}
    folder = TrialFolder(path=path, trial_name=path.name, task_name="")
    folder.warnings.extend(refusals(snapshot))
    _read_result(folder, result)
    _read_verifier(folder, result, snapshot)
    mask_folder(folder)
    return Verification(
        reward=folder.reward, reward_valid=folder.reward_valid, fields=folder.verifier_fields,
        stdout=folder.verifier_stdout, outputs=folder.verifier_outputs, exception_type=folder.exception_type,
        exception_message=folder.exception_message, warnings=tuple(folder.warnings),
    )
