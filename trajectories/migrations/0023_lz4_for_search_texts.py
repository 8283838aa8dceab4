"""lz4 for the other large texts an import writes: the search documents, new output lines, reasoning and arguments.

0007 gave outputs, messages and diffs lz4; what came after kept pglz, which
was most of the compression PostgreSQL still did in a bulk import (lz4
compresses these texts about as well in a fraction of the time). Servers
built without lz4 keep pglz. Rows already stored keep their compression
until rewritten.
"""
from importlib import import_module

from django.db import migrations

set_compression = import_module("trajectories.migrations.0007_fewer_step_indexes").set_compression

LZ4_COLUMNS = [
    ("trajectories_step", "search_document"),
    ("trajectories_step", "new_output"),
    ("trajectories_step", "reasoning"),
    ("trajectories_toolcall", "arguments"),
    ("trajectories_rolloutdocument", "words"),
]


def use_lz4(apps, schema_editor):
    set_compression(schema_editor, LZ4_COLUMNS, "lz4")


def use_default_compression(apps, schema_editor):
    set_compression(schema_editor, LZ4_COLUMNS, "default")


class Migration(migrations.Migration):
    dependencies = [("trajectories", "0022_rollout_words_trigram_index")]

    operations = [migrations.RunPython(use_lz4, use_default_compression)]
