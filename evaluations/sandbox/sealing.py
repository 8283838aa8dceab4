"""Sealed grading in the runner: a Harbor trial whose task is sealed as it loads.

In Harbor's default ("shared") mode the verifier runs in the agent's own
sandbox, after hours in which the agent was root there: a `python3` wrapper
on PATH, a swapped `/bin` or an edited scorer then decides the score. A
version with `sealed_grading` runs its trials as `SealedTrial`, whose task
config is `tasks.sealing.seal`'s: Harbor 0.26's separate verifier, with the
agent's workspace or declared artifacts carried over. This is Harbor's own
mechanism, applied to the config as loaded; the task folder is not touched.

One addition: the workspace files the task's instruction declares read-only
and the task does not pin itself (`Sealing.restored`; discover_sorting's
main.py, which its test.sh runs and believes) are put back from the
verifier's fresh copy of the task's image once the workspace is carried
(`ImageOriginals`): the verifier runs them as published, whatever the agent
made of them.
"""
from __future__ import annotations

import re
import shlex

from harbor.trial.artifact_handler import ArtifactHandler
from harbor.trial.trial import Trial

from tasks.sealing import seal, seal_task_dir

# What a path of Sealing.restored may hold (tasks.read_only._PATH), checked again before it meets a shell.
_SAFE_PATTERN = re.compile(r"[\w.*-]+(?:/[\w.*-]+)*")


class SealedTrial(Trial):
    """A Harbor trial whose task is sealed as it loads (`SealedTrial.create(config)`).

    `Trial.create` loads the task through `cls._load_task` and then builds a
    single- or multi-step trial from it; sealing the loaded config is the one
    change. `_load_task` is a Harbor internal: the Harbor version is pinned
    and tests/test_sealed_grading.py covers it.
    """

    @staticmethod
    async def _load_task(config):
        task, download = await Trial._load_task(config)
        task.config = seal(task.paths.task_dir, task.config).config
        return task, download

    @classmethod
    async def create(cls, config, **kwargs):
        trial = await super().create(config, **kwargs)
        keep_image_originals(trial)
        return trial


class ImageOriginals(ArtifactHandler):
    """Harbor's artifact handler, but the verifier's copies of `paths` (below `workspace`) are its image's own.

    Harbor empties each carried folder in the verifier's environment and
    uploads the agent's copy into it. Before that, the fresh environment's
    own copies of `paths` (globs relative to the workspace) are kept aside
    in it; after, what the agent left under those paths is removed and the
    kept copies put back. A file the agent deleted comes back too.
    """

    def __init__(self, *, artifacts, logger, workspace: str, paths: list[str]):
        super().__init__(artifacts=artifacts, logger=logger)
        unsafe = [path for path in paths if not _SAFE_PATTERN.fullmatch(path) or ".." in path.split("/")]
        if unsafe:
            raise ValueError(f"not a workspace path: {unsafe}")
        self.workspace, self.paths = workspace, list(paths)

    async def upload_artifacts(self, target_env, artifacts_dir, **kwargs) -> None:
        workspace, paths = shlex.quote(self.workspace), " ".join(self.paths)  # globs: unquoted on purpose
        kept = await _run(target_env, (
            f"keep=$(mktemp -d /tmp/autolab-image-originals.XXXXXX) && cd {workspace} && "
            f'for f in {paths}; do if [ -e "$f" ] || [ -L "$f" ]; then '
            f'mkdir -p "$keep/$(dirname "$f")" && cp -a "$f" "$keep/$f" || exit 1; fi; done && echo "$keep"'
        ))
        await super().upload_artifacts(target_env, artifacts_dir, **kwargs)
        keep = shlex.quote(kept.strip().splitlines()[-1])
        await _run(target_env, (
            f'cd {workspace} && for f in {paths}; do rm -rf -- "$f" || exit 1; done && '
            f"cp -a {keep}/. {workspace}/ && rm -rf {keep}"
        ))
        self.logger.info("graded with the task image's own %s (read-only), not the agent's", ", ".join(self.paths))


async def _run(environment, command: str) -> str:
    """`command` as root in the verifier's environment; its output, or RuntimeError (grading must not go on)."""
    result = await environment.exec(command, user="root")
    if result.return_code != 0:
        raise RuntimeError(f"could not put the task image's read-only files back before grading: "
                           f"{(result.stderr or result.stdout or '').strip()[:300]}")
    return result.stdout or ""


def keep_image_originals(trial) -> None:
    """Give a sealed trial the ImageOriginals handler when its task has files to restore (tasks.sealing)."""
    sealing = seal_task_dir(trial.task.paths.task_dir)
    if not sealing.restored:
        return
    handler = trial._artifact_handler
    trial._artifact_handler = ImageOriginals(
        artifacts=handler.artifacts, logger=handler.logger, workspace=sealing.carried[0], paths=sealing.restored
    )
