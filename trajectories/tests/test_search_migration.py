"""Migration 0006 gives rollouts stored before it their search documents."""
import pytest

from .migration_rows import build_documents, old_rollout

BEFORE = [("trajectories", "0005_h8speed_capped_search_indexes")]
AFTER = [("trajectories", "0008_rollout_verifier_outputs")]


@pytest.mark.django_db(transaction=True)
def test_documents_are_built_for_existing_steps(migrate):
    apps = migrate(BEFORE)
    Step = apps.get_model("trajectories", "Step")
    ToolCall = apps.get_model("trajectories", "ToolCall")
    Observation = apps.get_model("trajectories", "Observation")
    rollout = old_rollout(apps)
    screen = "$ python3 train.py\nCUDA out of memory"
    for position, (message, keystrokes, output) in enumerate(
        [("Train it.", "python3 train.py\n", screen), ("Poll.", "", screen + "\n$ nvidia-smi")]
    ):
        step = Step.objects.create(rollout=rollout, position=position, step_id=position + 1, source="agent", message=message)
        ToolCall.objects.create(step=step, position=0, function_name="bash_command", arguments={"keystrokes": keystrokes})
        Observation.objects.create(step=step, position=0, content=output)

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        apps = migrate(AFTER)
    # The rollout's document is built once, not once per step (a DISTINCT under Step's ordering).
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "trajectories_observation"' in q["sql"]]
    assert len(reads) == 1, reads
    document = apps.get_model("trajectories", "RolloutDocument").objects.get(rollout_id=rollout.pk)
    assert "'cuda'" in str(document.words) and "'smi'" in str(document.words)
    migrate.latest()  # the site's search reads columns later migrations add
    from trajectories.search import query as search

    assert [(h.step_id, h.where) for h in search.search_steps("out of memory")] == [(1, "output")]
    assert [(h.step_id, h.where) for h in search.search_steps("nvidia-smi")] == [(2, "output")]
    assert [(h.step_id, h.where) for h in search.search_steps("train.py")] == [(1, "command"), (1, "output")]


@pytest.mark.django_db(transaction=True)
def test_migrations_0020_0021_give_stored_steps_their_new_output_lines(migrate):
    apps = migrate([("trajectories", "0019_step_repeats")])
    Step = apps.get_model("trajectories", "Step")
    Observation = apps.get_model("trajectories", "Observation")
    rollout = old_rollout(apps)
    screens = ["$ python3 train.py\nCUDA out of memory", "$ python3 train.py\nCUDA out of memory\n$ nvidia-smi"]
    for position, screen in enumerate(screens):
        step = Step.objects.create(rollout=rollout, position=position, step_id=position + 1, source="agent")
        Observation.objects.create(step=step, position=0, content=screen)
    build_documents(apps, rollout)  # as the importer wrote them before 0020

    apps = migrate([("trajectories", "0021_new_output_trigram_index")])
    Step = apps.get_model("trajectories", "Step")
    assert list(Step.objects.order_by("position").values_list("new_output", flat=True)) == [
        "$ python3 train.py\nCUDA out of memory", "$ nvidia-smi",
    ]
    migrate.latest()  # the site's search reads columns later migrations add
    from trajectories.search import query as search

    # Inside words: the substring stage, over new output lines: the step that printed it.
    assert [(h.step_id, h.where) for h in search.search_steps("ut of mem")] == [(1, "output")]
    # The rollout page's find reads whole screens: both steps show it.
    assert search.matching_step_ids(rollout.pk, "ut of mem") == [1, 2]


def _trigram_indexes() -> set[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%%trgm'")
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_migration_0022_swaps_the_texts_trigram_indexes_for_one_of_rollout_words(migrate):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("pg_trgm is PostgreSQL's")
    migrate([("trajectories", "0021_new_output_trigram_index")])
    assert _trigram_indexes() == {
        "trajectories_step_message_trgm", "trajectories_step_reasoning_trgm",
        "trajectories_toolcall_arguments_trgm", "trajectories_step_new_output_trgm",
    }
    apps = migrate([("trajectories", "0022_rollout_words_trigram_index")])
    assert _trigram_indexes() == {"trajectories_rolloutdocument_words_trgm"}
    Step = apps.get_model("trajectories", "Step")
    Observation = apps.get_model("trajectories", "Observation")
    rollout = old_rollout(apps)
    step = Step.objects.create(rollout=rollout, position=0, step_id=1, source="agent", message="Train it.")
    Observation.objects.create(step=step, position=0, content="$ python3 train.py\nCUDA out of memory")
    build_documents(apps, rollout)
    migrate.latest()  # the site's search reads columns later migrations add
    from trajectories.search import query as search

    assert [(h.step_id, h.where) for h in search.search_steps("ut of mem")] == [(1, "output")]
    migrate([("trajectories", "0021_new_output_trigram_index")])
    assert "trajectories_step_message_trgm" in _trigram_indexes()


@pytest.mark.django_db(transaction=True)
def test_migration_0020_reads_and_writes_each_rollout_once(migrate):
    """The fill looped once per step, not per rollout (a DISTINCT under the steps' default ordering):
    each step was rewritten as many times as its rollout has steps."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    apps = migrate([("trajectories", "0019_step_repeats")])
    Step = apps.get_model("trajectories", "Step")
    Observation = apps.get_model("trajectories", "Observation")
    first = old_rollout(apps, trial_name="fill-0")
    second = apps.get_model("trajectories", "Rollout").objects.create(
        task=first.task, model=first.model, harness=first.harness, trial_name="fill-1"
    )
    rollouts = [first, second]
    for rollout in rollouts:
        for position in range(4):
            step = Step.objects.create(rollout=rollout, position=position, step_id=position + 1, source="agent")
            Observation.objects.create(step=step, position=0, content=f"$ step {position}\nline {position}")
    with CaptureQueriesContext(connection) as queries:
        apps = migrate([("trajectories", "0020_step_new_output")])
    reads = [q for q in queries.captured_queries if 'FROM "trajectories_observation"' in q["sql"]]
    writes = [q for q in queries.captured_queries if "UPDATE" in q["sql"].upper() and "trajectories_step" in q["sql"]]
    assert len(reads) == 2 and len(writes) == 2, (len(reads), len(writes))
    Step = apps.get_model("trajectories", "Step")
    assert Step.objects.get(rollout_id=rollouts[1].pk, position=3).new_output == "$ step 3\nline 3"
