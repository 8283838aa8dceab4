"""Storing the chunk documents of a rollout's steps (trajectories.search.document.CHUNK_STEPS).

The one writer of StepChunk rows: the importer, live imports, document
rebuilds and the synthetic data all store what TrajectoryDocuments.take_chunks
(or stored_chunks) made through here.
"""
from __future__ import annotations

from trajectories.models import StepChunk
from trajectories.storing.bulk_rows import insert_rows


def store_chunks(
    rollout_id: int, chunks: list[tuple[int, int, str]], *, whole: bool, positions: list[int] | None = None, model=None,
    new_rollout: bool = False, copy: bool = True,
) -> None:
    """Store `chunks` (first step, last step, document) of a rollout.

    `whole`: they are all its chunks, and replace every stored one (an
    import; a shorter trajectory leaves none behind). Otherwise they replace
    the stored chunks from their first on (a live tick: its open chunk grew).
    Steps are counted in trajectory order; `positions` maps them to their
    Step.position where that differs from the count (rows made by hand).
    `model`: a migration's historical StepChunk. `new_rollout` (with
    `whole`): the rollout was created in this transaction and has no chunk
    yet, so none is deleted (the delete's query and Django's collector were
    a good part of a small import's chunk cost). `copy=False`: one INSERT,
    which pipeline mode sends without waiting (bulk_rows.insert_rows).
    """
    model = model or StepChunk
    at = positions.__getitem__ if positions is not None else int
    if whole:
        if not new_rollout:
            model.objects.filter(rollout_id=rollout_id).delete()
    elif chunks:
        model.objects.filter(rollout_id=rollout_id, first__gte=at(chunks[0][0])).delete()
    # Through COPY on PostgreSQL, as the steps go, unless told otherwise: INSERT's
    # statement and parameters cost more than the rows here.
    insert_rows(
        model,
        [
            {"rollout_id": rollout_id, "first": at(first), "last": at(last), "words": words, "words_text": words}
            for first, last, words in chunks
        ],
        ids=False,  # nothing refers to a chunk by its id
        copy=copy,
    )
