"""Large texts an import writes are compressed with lz4 on PostgreSQL (migrations 0007 and 0023): pglz cost more than the rest of TOAST."""
import importlib

import pytest
from django.db import connection

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="column compression is PostgreSQL's"),
]

COLUMNS = [
    *importlib.import_module("trajectories.migrations.0007_fewer_step_indexes").LZ4_COLUMNS,
    *importlib.import_module("trajectories.migrations.0023_lz4_for_search_texts").LZ4_COLUMNS,
]


@pytest.mark.parametrize(("table", "column"), COLUMNS)
def test_large_text_columns_use_lz4(table, column):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attcompression FROM pg_attribute WHERE attrelid = %s::regclass AND attname = %s", [table, column]
        )
        assert cursor.fetchone() == ("l",)
