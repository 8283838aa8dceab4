"""Secrets masked in the rows stored before trial text was masked as it is read (issue 43).

Imports now mask what the agent printed before it is stored
(trajectories.reading.masked), so that no row, search word or review holds
a secret, and pages, exports and search need no masking of their own. The
rows stored before get the same rule here, once: every rollout's text and
JSON columns, its steps, tool calls, outputs (a cut output's whole text,
compressed apart, and the head and tail kept in its row, cut again from the
masked whole), subagents, events, grades and reviews, and the search words
of every rollout whose steps changed, rebuilt from the masked rows
(trajectories.search.query.rebuild_documents).

Rows are read a batch at a time in key order and only those the rule
changes are written. A rollout's text is masked in one call
(autolab_site.masking.mask_values: the rule's triggers are looked for once
in a whole batch), so the fill costs about one read of the stored text.
"""
from django.db import migrations

BATCH = 500


def _batches(queryset, fields):
    """The rows of `queryset` (values_list of "pk" and `fields`), BATCH at a time in key order."""
    last = 0
    while True:
        rows = list(queryset.filter(pk__gt=last).order_by("pk").values_list("pk", *fields)[:BATCH])
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def _mask_rows(model, fields, *, lengths=None, queryset=None, changed=None, owner=None):
    """Mask `fields` of every row of `model`; `changed` collects owner(row) of each row changed."""
    from autolab_site.masking import mask_values

    lengths = lengths or {}
    queryset = queryset if queryset is not None else model.objects.all()
    columns = list(fields) + ([owner] if owner else [])
    for rows in _batches(queryset, columns):
        values = [value for row in rows for value in row[1 : 1 + len(fields)]]
        masked = iter(mask_values(values))
        updates = []
        for row in rows:
            new = [next(masked) for _ in fields]
            if new != list(row[1 : 1 + len(fields)]):
                updates.append(model(pk=row[0], **{
                    name: value[: lengths[name]] if name in lengths else value for name, value in zip(fields, new)
                }))
                if changed is not None:
                    changed.add(row[-1])
        if updates:
            model.objects.bulk_update(updates, list(fields), batch_size=BATCH)


def _mask_outputs(observation_model, text_model, changed: set) -> None:
    """Mask each output; a cut one from its whole text, whose head and tail its row keeps."""
    from autolab_site.masking import mask_text, mask_values
    from trajectories.storing.observation_text import compress, decompressed_chunks

    fields = ["content", "extra", "cut_at", "full_length", "step__rollout_id", "step__subtrajectory_id"]
    for rows in _batches(observation_model.objects.all(), fields):
        masked = iter(mask_values([value for row in rows for value in (row[1], row[2])]))
        cut = [row[0] for row in rows if row[3] is not None]
        wholes = dict(text_model.objects.filter(observation_id__in=cut).values_list("observation_id", "data")) if cut else {}
        updates, texts = [], []
        for pk, content, extra, cut_at, full_length, rollout_id, sub in rows:
            new_content, new_extra = next(masked), next(masked)
            whole_changed = False
            if pk in wholes:
                whole = b"".join(decompressed_chunks(bytes(wholes[pk]))).decode("utf-8", "replace")
                new_whole = mask_text(whole)
                if new_whole != whole:
                    tail = len(content) - cut_at
                    new_content = new_whole[:cut_at] + (new_whole[-tail:] if tail else "")
                    full_length = len(new_whole)
                    texts.append(text_model(observation_id=pk, data=compress(new_whole)))
                    whole_changed = True
            if whole_changed or (new_content, new_extra) != (content, extra):
                updates.append(observation_model(pk=pk, content=new_content, extra=new_extra, full_length=full_length))
                if sub is None:
                    changed.add(rollout_id)
        if updates:
            observation_model.objects.bulk_update(updates, ["content", "extra", "full_length"], batch_size=BATCH)
        if texts:
            text_model.objects.bulk_update(texts, ["data"], batch_size=10)


def mask_stored(apps, schema_editor):
    from trajectories.search.query import rebuild_documents

    get = lambda name: apps.get_model("trajectories", name)  # noqa: E731
    rollout_fields = [
        "exception_message", "exception_traceback", "verifier_stdout", "verifier_fields", "verifier_outputs",
        "status_reason", "excluded", "validation_warnings", "config", "agent_extra", "final_metrics",
        "failure_evidence", "score_log", "files_changed",
    ]
    _mask_rows(get("Rollout"), rollout_fields, lengths={"status_reason": 1000, "excluded": 2000})
    changed: set[int] = set()
    step = get("Step")
    main_steps = step.objects.filter(subtrajectory__isnull=True)
    _mask_rows(step, ["message", "reasoning", "extra", "diff"], queryset=main_steps, changed=changed, owner="rollout_id")
    _mask_rows(step, ["message", "reasoning", "extra", "diff"], queryset=step.objects.filter(subtrajectory__isnull=False))
    call = get("ToolCall")
    _mask_rows(call, ["arguments"], queryset=call.objects.filter(step__subtrajectory__isnull=True), changed=changed,
               owner="step__rollout_id")
    _mask_rows(call, ["arguments"], queryset=call.objects.filter(step__subtrajectory__isnull=False))
    _mask_outputs(get("Observation"), get("ObservationText"), changed)
    _mask_rows(get("SubTrajectory"), ["raw"])
    _mask_rows(get("RolloutEvent"), ["detail"])
    _mask_rows(get("Grade"), ["message", "verifier_fields", "verifier_stdout", "verifier_outputs"])
    _mask_rows(get("Review"), ["summary", "error"])
    _mask_rows(get("ReviewCheck"), ["explanation"])
    _mask_rows(get("JobReview"), ["summary", "error"])
    models = tuple(get(name) for name in ("Step", "ToolCall", "Observation", "RolloutDocument", "StepChunk"))
    rebuild_documents(sorted(changed), models=models)


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0034_rollout_verifier_mode")]

    operations = [migrations.RunPython(mask_stored, migrations.RunPython.noop, elidable=True)]
