from django.contrib import admin  # noqa: F401


# --- Leaderboard settings and published results (evaluations.leaderboard) ---
from .models import Entry, PublishedResult  # noqa: E402


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin):
    """Per-entry leaderboard flags; saving one refreshes the cached boards."""

    list_display = ("model", "harness", "version", "ablation", "in_comparison", "note")
    list_filter = ("version", "ablation", "in_comparison")
    list_editable = ("ablation", "in_comparison")
    search_fields = ("model__name", "harness__name", "note")
    raw_id_fields = ("model", "harness")


@admin.register(PublishedResult)
class PublishedResultAdmin(admin.ModelAdmin):
    list_display = ("model", "harness", "version", "task", "rollout_index", "score", "source", "imported_at")
    list_filter = ("version", "source")
    search_fields = ("model__name", "task__name", "source")
    raw_id_fields = ("model", "harness", "task")
