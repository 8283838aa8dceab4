"""Work after a commit, run by the transaction's owner as its last writes (autolab_site.last_writes)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction

from autolab_site.last_writes import after_commit, run_before_commit


@pytest.mark.django_db(transaction=True)
def test_work_runs_once_after_the_commit_or_once_inside_it_when_the_owner_asks():
    seen = []

    def work():
        seen.append(connection.in_atomic_block)

    with transaction.atomic():
        after_commit(work)
        assert seen == []
    assert seen == [False]  # after the commit, as on_commit

    seen.clear()
    with transaction.atomic():
        after_commit(work)
        run_before_commit()
        assert seen == [True]  # inside the transaction
        run_before_commit()
    assert seen == [True]  # and never again

    seen.clear()
    after_commit(work)  # no transaction: at once
    assert seen == [False]


@pytest.mark.django_db(transaction=True)
def test_work_run_inside_is_rolled_back_with_the_transaction_and_a_rolled_back_savepoints_work_never_runs():
    def write(name):
        return lambda: Group.objects.create(name=name)

    with pytest.raises(RuntimeError):
        with transaction.atomic():
            after_commit(write("inside"))
            run_before_commit()
            assert Group.objects.filter(name="inside").exists()
            raise RuntimeError("the import failed after its last writes")
    assert not Group.objects.filter(name="inside").exists()

    with transaction.atomic():
        after_commit(write("kept"))
        try:
            with transaction.atomic():
                after_commit(write("undone"))
                raise RuntimeError
        except RuntimeError:
            pass
        run_before_commit()
    assert sorted(Group.objects.values_list("name", flat=True)) == ["kept"]


@pytest.mark.django_db(transaction=True)
def test_inside_a_savepoint_the_work_waits_for_the_commit():
    """An importer called inside someone else's transaction: its savepoint may still be rolled back
    after its last writes, and with it work that belongs to the outer change."""
    seen = []
    with transaction.atomic():
        after_commit(lambda: seen.append("outer"))
        try:
            with transaction.atomic():
                run_before_commit()
                assert seen == []  # not the owner of the commit: nothing runs here
                raise RuntimeError("the inner import fails")
        except RuntimeError:
            pass
    assert seen == ["outer"]  # the outer change's work, after its commit
