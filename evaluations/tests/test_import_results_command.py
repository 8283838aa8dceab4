"""python manage.py import_results and the staff upload form."""
from __future__ import annotations

import html
import json

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluations.boards import serving
from agents.models import AgentModel, Harness
from evaluations.models import PublishedResult
from tasks.models import BenchmarkVersion, Task

pytestmark = pytest.mark.django_db

HEADER = "model,harness,version,task,rollout_index,score,source\n"


@pytest.fixture(autouse=True)
def world():
    cache.clear()
    version = BenchmarkVersion.objects.create(name="1.1")
    for name in ("hash_join", "flux2_klein_lora"):
        Task.objects.create(version=version, name=name, category="cuda")
    return version


def write(tmp_path, text: str, name: str = "results.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_imports_per_task_and_per_rollout_scores(tmp_path, capsys):
    path = write(
        tmp_path,
        HEADER
        + "openai/gpt-5,terminus-2,1.1,hash_join,,0.7,Paper 2026 Table 2\n"
        + "claude-opus-4.6,terminus-2,1.1,hash_join,0,0.5,https://example.org\n"
        + "claude-opus-4.6,terminus-2,1.1,hash_join,1,1.0,https://example.org\n",
    )
    call_command("import_results", str(path))
    assert "3 published scores created" in capsys.readouterr().out
    assert PublishedResult.objects.count() == 3
    # Model names are normalised, unknown models and harnesses created.
    assert AgentModel.objects.filter(name="gpt-5").exists()
    assert Harness.objects.filter(name="terminus-2").count() == 1
    published = {p.model: p for p in serving.build(BenchmarkVersion.objects.get()).published}
    assert published["gpt-5"].avg == pytest.approx(0.35)  # .7 on one task of two
    assert published["claude-opus-4.6"].avg == pytest.approx(0.375)
    assert published["claude-opus-4.6"].best == pytest.approx(0.5)

    # Importing again replaces rather than duplicates.
    write(tmp_path, HEADER + "gpt-5,terminus-2,1.1,hash_join,,0.9,Paper 2026 v2\n")
    call_command("import_results", str(path))
    assert PublishedResult.objects.count() == 3
    assert PublishedResult.objects.get(model__name="gpt-5").source == "Paper 2026 v2"


def test_any_bad_row_imports_nothing_and_reports_every_row(tmp_path):
    path = write(
        tmp_path,
        HEADER
        + "gpt-5,terminus-2,1.1,hash_join,,0.7,paper\n"  # row 2: fine
        + "gpt-5,terminus-2,9.9,hash_join,,0.7,paper\n"  # row 3
        + "gpt-5,terminus-2,1.1,nope,,0.7,paper\n"  # row 4
        + "gpt-5,terminus-2,1.1,flux2_klein_lora,,high,paper\n"  # row 5
        + "gpt-5,,1.1,flux2_klein_lora,-1,0.2,\n"  # row 6
        + "gpt-5,terminus-2,1.1,hash_join,,0.8,paper\n",  # row 7: duplicates row 2
    )
    with pytest.raises(CommandError) as raised:
        call_command("import_results", str(path))
    message = str(raised.value)
    assert "nothing imported" in message
    assert "row 3: unknown benchmark version '9.9'" in message
    assert "row 4: no task 'nope' in version 1.1" in message
    assert "row 5: score must be a number, not 'high'" in message
    assert "row 6: missing harness; missing source; rollout_index '-1'" in message
    assert "row 7: the same model, harness, task and rollout_index as row 2" in message
    assert "row 2" not in message.replace("as row 2", "")
    assert PublishedResult.objects.count() == 0
    assert not AgentModel.objects.exists()


def test_missing_columns_and_files(tmp_path):
    with pytest.raises(CommandError, match="missing column"):
        call_command("import_results", str(write(tmp_path, "model,score\nx,1\n")))
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_results", str(tmp_path / "absent.csv"))
    with pytest.raises(CommandError, match="no rows"):
        call_command("import_results", str(write(tmp_path, HEADER)))


def test_mixing_task_and_rollout_scores_is_refused(tmp_path):
    path = write(
        tmp_path,
        HEADER + "gpt-5,terminus-2,1.1,hash_join,,0.7,paper\n" + "gpt-5,terminus-2,1.1,hash_join,0,0.5,paper\n",
    )
    with pytest.raises(CommandError, match="row 2: a per-task score mixed"):
        call_command("import_results", str(path))


def test_json(tmp_path):
    items = [{"model": "gpt-5", "harness": "terminus-2", "version": "1.1", "task": "hash_join", "score": 0.4, "source": "x"}]
    call_command("import_results", str(write(tmp_path, json.dumps(items), "r.json")))
    assert PublishedResult.objects.get().score == 0.4
    with pytest.raises(CommandError, match="item 1: missing harness; missing version"):
        call_command("import_results", str(write(tmp_path, json.dumps([{"model": "m"}]), "s.txt")), "--json")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("import_results", str(write(tmp_path, "{", "t.json")))


def test_staff_upload_form(client, tmp_path):
    url = reverse("evaluations:import_results")
    assert client.get(url).status_code == 302  # staff only
    client.force_login(User.objects.create_user("staff", password="x", is_staff=True))
    assert client.get(url).status_code == 200
    bad = SimpleUploadedFile("r.csv", (HEADER + "gpt-5,terminus-2,1.1,nope,,0.7,paper\n").encode())
    response = client.post(url, {"file": bad})
    assert "row 2: no task" in response.content.decode() and "Nothing was imported" in response.content.decode()
    good = SimpleUploadedFile("r.csv", (HEADER + "gpt-5,terminus-2,1.1,hash_join,,0.7,paper\n").encode())
    response = client.post(url, {"file": good}, follow=True)
    assert "1 published scores created" in response.content.decode()
    assert PublishedResult.objects.count() == 1


TOO_LONG = "m" * 201


@pytest.mark.parametrize(
    "text, problem",
    [
        (HEADER + "gpt-\x005,terminus-2,1.1,hash_join,,0.7,paper\n", "row 2: holds a NUL character (0x00)"),
        (HEADER + "gpt-5,terminus-2,1.1,hash_join,,0.7,pa\x00per\n", "row 2: holds a NUL character (0x00)"),
        (HEADER + "gpt-5,terminus-2,1.1,hash_join,2147483648,0.7,paper\n",
         "row 2: rollout_index '2147483648' is not a whole number from 0 to 2147483647"),
        (HEADER + "gpt-5,terminus-2,1.1,hash_join,99999999999999999999,0.7,paper\n", "is not a whole number from 0 to"),
        (HEADER + f"{TOO_LONG},terminus-2,1.1,hash_join,,0.7,paper\n", "row 2: model name is 201 characters long (at most 200)"),
        (HEADER + f"gpt-5,{'h' * 201},1.1,hash_join,,0.7,paper\n", "row 2: harness name is 201 characters long (at most 200)"),
        (HEADER + "gpt-5,terminus-2,1.1,hash_join,,0.7,paper,main,surplus\n", "row 2: 9 cells, but the header names 7 columns"),
        ("model,model,harness,version,task,score,source\na,b,terminus-2,1.1,hash_join,0.7,paper\n",
         "row 1 (header): column 'model' appears twice"),
        ("model,harness,version,source,overall_avg\ngpt-5,terminus-2,1.1,src\x00,0.5\n", "row 2: holds a NUL character (0x00)"),
    ],
)
def test_a_row_the_database_cannot_hold_is_refused_with_its_reason(client, text, problem):
    """A staff QA pass found these answered 500 (PostgreSQL refused NUL, an integer out of range) or
    were silently merged (two model names differing after 200 characters) or ignored (a surplus cell)."""
    client.force_login(User.objects.create_user("staff", password="x", is_staff=True))
    upload = SimpleUploadedFile("r.csv", text.encode())
    response = client.post(reverse("evaluations:import_results"), {"file": upload})
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert problem in page and "Nothing was imported" in page
    assert not PublishedResult.objects.exists() and not AgentModel.objects.exists()


def test_a_json_row_with_a_nul_character_is_refused(tmp_path):
    items = [{"model": "gpt-5", "harness": "terminus-2", "version": "1.1", "task": "hash_\u0000join", "score": 0.4, "source": "x"}]
    with pytest.raises(CommandError, match=r"item 1: holds a NUL character \(0x00\)"):
        call_command("import_results", str(write(tmp_path, json.dumps(items), "r.json")))


def test_a_figure_printed_with_absurdly_many_decimals_keeps_ten(client):
    """"1e-40000" was 40,000 printed decimals: more than the column holds (500), and a board cell of 300 digits for 1e-300."""
    from evaluations.models import PublishedFigure

    call_command_text = "model,harness,version,source,overall_avg\ngpt-5,terminus-2,1.1,src,1e-40000\n"
    client.force_login(User.objects.create_user("staff", password="x", is_staff=True))
    response = client.post(reverse("evaluations:import_results"), {"file": SimpleUploadedFile("r.csv", call_command_text.encode())})
    assert response.status_code == 302
    assert PublishedFigure.objects.get().decimals == 10
