"""The rollout page's trial tabs on the real shared trials: each tab's content, lazily; bad input a 404 or 400."""
from __future__ import annotations

import re

import pytest
from django.urls import reverse

from autolab_site.masking import MASK
from trajectories.models import Rollout
from trajectories.reading import trial_tabs
from trajectories.services import store_trial_files

from . import factories
from .real_trials import GROK, OPUS

pytestmark = pytest.mark.django_db
FETCH = {"HTTP_X_REQUESTED_WITH": "fetch"}


def use_folder(settings, path) -> None:
    settings.STORAGES = {**settings.STORAGES, "artifacts": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(path)}}}


@pytest.fixture
def shared(settings, tmp_path, shared_tasks_dir, shared_trials_dir):
    """The real trials imported, their folders in the artifact storage (what the runner does when a trial ends)."""
    use_folder(settings, tmp_path / "artifacts")
    rollouts = factories.import_shared_rollouts(shared_tasks_dir, shared_trials_dir)
    store_trial_files(rollouts["opus"], shared_trials_dir / OPUS)
    store_trial_files(rollouts["grok"], shared_trials_dir / GROK)
    for rollout in rollouts.values():
        rollout.refresh_from_db()
    return rollouts


def tab(client, rollout, name, query="", **headers):
    return client.get(reverse("trajectories:trial_tab", args=[rollout.pk, name]) + query, **(headers or FETCH))


def text_of(response) -> str:
    return response.content.decode()


def test_the_rollout_page_links_every_tab_and_holds_none_of_their_content(client, shared):
    page = text_of(client.get(reverse("trajectories:rollout_detail", args=[shared["opus"].pk])))
    for slug, label in trial_tabs.TABS:
        assert f'href="/rollouts/{shared["opus"].pk}/tabs/{slug}/"' in page and f">{label}</a>" in page
    assert "verifier/test-stdout.txt" not in page and "baseline_score_measured" in page  # the Result card keeps its fields
    assert 'id="reward-json"' not in page and 'id="config-json"' not in page


def test_verifier_tab_shows_stdout_reward_json_in_full_and_the_anchors(client, shared, shared_trials_dir):
    response = tab(client, shared["opus"], "verifier")
    assert response.status_code == 200 and "<html" not in text_of(response)
    body = text_of(response)
    stdout = (shared_trials_dir / OPUS / "verifier" / "test-stdout.txt").read_text()
    last_line = stdout.strip().splitlines()[-1]
    assert 'data-stream="verifier/test-stdout.txt"' in body
    from django.utils.html import escape
    assert escape(last_line) in body
    reward_json = (shared_trials_dir / OPUS / "verifier" / "reward.json").read_text()
    assert escape(reward_json) in body  # the file as written, every field
    assert "baseline_score.json" in body and "optimized_score.json" in body
    anchors = re.search(r'<p id="tab-anchors">(.*?)</p>', body, re.S).group(1)
    assert "0.4918" in body and "0.62" in body and anchors.strip()
    assert 'id="tab-anchors-in-use"' in body


def test_artifacts_tab_lists_every_stored_file_with_its_size(client, shared, shared_trials_dir):
    body = text_of(tab(client, shared["opus"], "artifacts"))
    on_disk = sorted(p.relative_to(shared_trials_dir / OPUS).as_posix() for p in (shared_trials_dir / OPUS).rglob("*") if p.is_file())
    assert f"{len(on_disk)} files" in body
    for path in on_disk:
        assert f'/rollouts/{shared["opus"].pk}/view/{path}"' in body and f'/rollouts/{shared["opus"].pk}/files/{path}"' in body
    size = (shared_trials_dir / OPUS / "agent" / "trajectory.json").stat().st_size
    assert f'title="{size} bytes"' in body


def test_an_imported_rollout_without_stored_files_says_where_it_came_from(client, settings, tmp_path, shared_tasks_dir, shared_trials_dir):
    use_folder(settings, tmp_path / "artifacts")
    rollouts = factories.import_shared_rollouts(shared_tasks_dir, shared_trials_dir)
    body = text_of(tab(client, rollouts["grok"], "artifacts"))
    assert 'id="no-artifacts"' in body and "imported from" in body
    verifier = text_of(tab(client, rollouts["grok"], "verifier"))
    assert "no_lora_file" in verifier and 'data-stream="stdout"' in verifier  # the stdout and fields imported with it


def test_config_tab_shows_config_json_task_toml_and_masks_secrets(client, shared):
    opus = shared["opus"]
    Rollout.objects.filter(pk=opus.pk).update(config={
        **opus.config, "agent": {**opus.config["agent"], "env": {"OPENAI_API_KEY": "sk-proj-0123456789abcdefXYZ"}}})
    opus.model.sampling_params = {"temperature": 0.7, "max_tokens": 4096}
    opus.model.api_key_env = "OPENAI_API_KEY"
    opus.model.save()
    body = text_of(tab(client, opus, "config"))
    assert "sk-proj-0123456789abcdefXYZ" not in body and f"&quot;OPENAI_API_KEY&quot;: &quot;{MASK}&quot;" in body
    assert "openai/claude-opus-4.6" in body and "&quot;max_tokens&quot;: 4096" in body
    assert 'id="task-toml"' in body and "[optimization" in body  # the task's task.toml, read from the task folder
    # The task was imported after these trials ran: the page cannot claim it is the task.toml they used.
    assert "cannot tell" in re.search(r'<p class="muted" id="task-toml-note">(.*?)</p>', body, re.S).group(1)
    assert "environment variable <code>OPENAI_API_KEY</code>" in body


def test_log_tab_reads_the_trial_log_and_filters_its_lines(client, shared, tmp_path):
    opus = shared["opus"]
    assert 'id="no-log"' in text_of(tab(client, opus, "log"))  # these trials kept no trial.log
    folder = tmp_path / "extra"
    folder.mkdir()
    lines = [f"{n:04d} step {'benchmark' if n % 10 == 0 else 'wait'} <b>{n}</b>" for n in range(1, 101)]
    (folder / "trial.log").write_text("\n".join(lines) + "\n")
    store_trial_files(opus, folder, ["trial.log"])
    body = text_of(tab(client, opus, "log"))
    assert "100 lines" in body and "&lt;b&gt;100&lt;/b&gt;" in body and "<b>100</b>" not in body
    found = text_of(tab(client, opus, "log", "?q=BENCHMARK"))
    assert "10 of 100 lines hold" in found
    assert found.count('class="log-line"') == 10 and "0011 step wait" not in found
    assert tab(client, opus, "log", "?q=" + "x" * 300).status_code == 400  # a query longer than the form takes


def test_exception_tab(client, shared):
    opus = shared["opus"]
    assert 'id="no-exception"' in text_of(tab(client, opus, "exception"))
    Rollout.objects.filter(pk=opus.pk).update(
        exception_type="AgentTimeoutError", exception_message="Agent timed out after 7200s <oops>",
        exception_traceback='Traceback (most recent call last):\n  File "harbor/trial.py", line 1\nAgentTimeoutError')
    body = text_of(tab(client, opus, "exception"))
    assert 'id="exception-type">AgentTimeoutError' in body and "&lt;oops&gt;" in body and "harbor/trial.py" in body
    assert 'id="exception-file"' not in body


def test_exception_tab_shows_harbors_exception_txt(client, shared, tmp_path):
    grok = shared["grok"]
    folder = tmp_path / "failed"
    folder.mkdir()
    (folder / "exception.txt").write_text("Traceback (most recent call last):\nRuntimeError: <sandbox> gone\n")
    store_trial_files(grok, folder, ["exception.txt"])
    body = text_of(tab(client, grok, "exception"))
    assert 'id="no-exception"' not in body and "RuntimeError: &lt;sandbox&gt; gone" in body


def test_every_tab_is_a_whole_page_without_javascript(client, shared):
    for slug, label in trial_tabs.TABS:
        response = client.get(reverse("trajectories:trial_tab", args=[shared["opus"].pk, slug]))
        body = text_of(response)
        assert response.status_code == 200 and "<html" in body and f'aria-current="page">{label}</a>' in body
        assert f'data-tab-body="{slug}"' in body
        assert "X-Requested-With" in response["Vary"]


def test_text_is_shown_escaped_and_binaries_only_downloaded(client, shared, tmp_path):
    opus = shared["opus"]
    folder = tmp_path / "extra"
    (folder / "agent").mkdir(parents=True)
    (folder / "agent" / "page.html").write_text("<script>alert(1)</script>")
    (folder / "agent" / "model.bin").write_bytes(b"\x00\x01\x02binary")
    store_trial_files(opus, folder, ["agent/page.html", "agent/model.bin"])
    view = client.get(reverse("trajectories:artifact_view", args=[opus.pk, "agent/page.html"]))
    assert view.status_code == 200 and "&lt;script&gt;alert(1)&lt;/script&gt;" in text_of(view)
    assert "<script>alert(1)" not in text_of(view)
    binary = client.get(reverse("trajectories:artifact_view", args=[opus.pk, "agent/model.bin"]))
    assert binary.status_code == 200 and 'id="binary-note"' in text_of(binary) and "binary\x00" not in text_of(binary)
    for path in ("agent/page.html", "agent/model.bin"):
        download = client.get(reverse("trajectories:trial_file", args=[opus.pk, path]))
        assert download["Content-Disposition"].startswith("attachment")
        assert download["Content-Type"] == "application/octet-stream" and download["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "agent/../config.json", "not-there.txt", "agent"])
def test_a_path_the_trial_did_not_leave_is_a_404(client, shared, path):
    assert client.get(f"/rollouts/{shared['opus'].pk}/view/{path}").status_code == 404
    assert client.get(f"/rollouts/{shared['opus'].pk}/files/{path}").status_code == 404


@pytest.mark.parametrize("name", ["nope", "VERIFIER", "log.txt", "..", "%00"])
def test_an_unknown_tab_is_a_404(client, shared, name):
    assert client.get(f"/rollouts/{shared['opus'].pk}/tabs/{name}/").status_code in (404, 400)


def test_bad_parameters_are_a_400_and_a_missing_rollout_a_404(client, shared):
    assert tab(client, shared["opus"], "artifacts", "?page=abc").status_code == 400
    assert tab(client, shared["opus"], "artifacts", "?page=99").status_code == 200  # past the end: the last page
    assert client.get("/rollouts/999999/tabs/log/").status_code == 404
    assert client.get("/rollouts/999999/view/trial.log").status_code == 404


def first_load(client, rollout) -> str:
    body = text_of(client.get(reverse("trajectories:rollout_detail", args=[rollout.pk])))
    return re.sub(r'nonce="[^"]*"', 'nonce=""', body)  # the CSP nonce is new in every response


def test_the_first_load_does_not_change_with_500_files_and_a_huge_log(client, shared, tmp_path):
    opus = shared["opus"]
    before = first_load(client, opus)
    folder = tmp_path / "many"
    (folder / "outputs").mkdir(parents=True)
    names = [f"outputs/sample_{n:03d}.png" for n in range(500)]
    for name in names:
        (folder / name).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (folder / "trial.log").write_bytes(b"".join(b"%08d the agent waits for the benchmark <tag>\n" % n for n in range(120_000)))
    store_trial_files(opus, folder, [*names, "trial.log"])
    opus.refresh_from_db()
    assert len(opus.artifacts) > 500 and max(entry["size"] for entry in opus.artifacts) > 5_000_000
    after = first_load(client, opus)
    assert len(after.encode()) == len(before.encode())
    assert after == before
    # The tabs have it all, when asked.
    listing = text_of(tab(client, opus, "artifacts"))
    assert listing.count('class="artifact-path"') == 500 and "next</a>" in listing  # 509 files: a second page
    log = text_of(tab(client, opus, "log"))
    assert "its last 1.0\xa0MB read" in log and "the last 2000 shown" in log and len(log) < 300_000
    assert "00119999 the agent waits for the benchmark &lt;tag&gt;" in log  # the end of the log


def test_import_trials_store_files_fills_the_tabs_from_a_folder_and_an_archive(client, settings, tmp_path, shared_tasks_dir, shared_trials_dir):
    import tarfile

    from django.core.management import call_command

    from tasks.services import import_tasks

    use_folder(settings, tmp_path / "artifacts")
    import_tasks(shared_tasks_dir, version="1.1")
    call_command("import_trials", str(shared_trials_dir / OPUS), "--store-files", stdout=open("/dev/null", "w"))
    opus = Rollout.objects.get()
    assert "verifier/reward.json" in {entry["path"] for entry in opus.artifacts}
    archive = tmp_path / "grok.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(shared_trials_dir / GROK, arcname=f"job/{GROK}")
    call_command("import_trials", str(archive), "--store-files", stdout=open("/dev/null", "w"))
    grok = Rollout.objects.exclude(pk=opus.pk).get()
    assert "verifier/test-stdout.txt" in {entry["path"] for entry in grok.artifacts}
    listing = text_of(tab(client, grok, "artifacts"))
    assert f'/rollouts/{grok.pk}/view/verifier/test-stdout.txt"' in listing
    # Without the flag, nothing is copied (and the tab says the folder is not in the storage).
    Rollout.objects.all().delete()
    call_command("import_trials", str(shared_trials_dir / OPUS), stdout=open("/dev/null", "w"))
    assert Rollout.objects.get().artifacts == []


def test_a_key_in_the_trials_own_files_is_masked_in_every_view(client, shared, tmp_path, shared_trials_dir):
    """config.json records the agent's env: the Config tab, the file's page and its download all mask it."""
    import json
    import shutil

    grok = shared["grok"]
    folder = tmp_path / "trial"
    shutil.copytree(shared_trials_dir / GROK, folder)
    config = json.loads((folder / "config.json").read_text())
    config["agent"]["env"] = {"XAI_API_KEY": "xai-0123456789abcdefghij"}
    (folder / "config.json").write_text(json.dumps(config, indent=4))
    (folder / "trial.log").write_text("starting\nusing key xai-0123456789abcdefghij for the model\n")
    store_trial_files(grok, folder)
    Rollout.objects.filter(pk=grok.pk).update(config=config)
    views = {
        "config tab": text_of(tab(client, grok, "config")),
        "log tab": text_of(tab(client, grok, "log")),
        "file page": text_of(client.get(reverse("trajectories:artifact_view", args=[grok.pk, "config.json"]))),
        "download": b"".join(client.get(reverse("trajectories:trial_file", args=[grok.pk, "config.json"])).streaming_content).decode(),
    }
    for name, body in views.items():
        assert "xai-0123456789abcdefghij" not in body, name
        assert MASK in body, name
    assert "XAI_API_KEY" in views["download"] and '"model_name"' in views["download"]  # the rest as written
