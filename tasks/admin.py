from django.contrib import admin

from .models import BenchmarkVersion, Task, TaskRevision


@admin.register(BenchmarkVersion)
class BenchmarkVersionAdmin(admin.ModelAdmin):
    list_display = ("name", "benchmark", "scoring", "clip_rewards", "human_hourly_rate_usd", "demo", "released_on", "created_at")
    list_filter = ("benchmark", "clip_rewards", "demo")
    search_fields = ("name", "benchmark", "description")


class TaskRevisionInline(admin.TabularInline):
    model = TaskRevision
    extra = 0
    fields = ("imported_at", "checksum", "changed_fields")
    readonly_fields = fields
    can_delete = False


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "version",
        "category",
        "metric",
        "direction",
        "baseline_score",
        "reference_score",
        "scoring_rule",
        "budget_sec",
        "gpus",
        "gpu_type",
    )
    list_filter = ("version", "category", "direction", "scoring_rule", "gpus")
    search_fields = ("name", "metric", "library", "author")
    list_select_related = ("version",)
    readonly_fields = ("checksum", "harbor_digest", "source_path", "created_at", "updated_at")
    inlines = [TaskRevisionInline]
    fieldsets = (
        (None, {"fields": ("version", "name", "category", "difficulty", "tags", "library", "author")}),
        (
            "Scoring",
            {
                "fields": (
                    "metric",
                    "direction",
                    "baseline_score",
                    "baseline_method",
                    "reference_score",
                    "reference_method",
                    "reference_source",
                    "scoring_rule",
                    "transform",
                    "transform_offset",
                    "final_only",
                    "benchmark_pattern",
                    "metric_pattern",
                )
            },
        ),
        (
            "Resources",
            {
                "fields": (
                    "budget_sec",
                    "verifier_timeout_sec",
                    "build_timeout_sec",
                    "cpus",
                    "memory_mb",
                    "storage_mb",
                    "gpus",
                    "gpu_type",
                    "allow_internet",
                )
            },
        ),
        ("Content", {"fields": ("instruction", "optimization", "metadata")}),
        (
            "Source",
            {"fields": ("checksum", "harbor_digest", "source_path", "has_environment", "has_tests", "has_solution", "created_at", "updated_at")},
        ),
    )


@admin.register(TaskRevision)
class TaskRevisionAdmin(admin.ModelAdmin):
    list_display = ("task", "checksum", "imported_at")
    list_filter = ("task__version",)
    search_fields = ("task__name", "checksum")
    list_select_related = ("task", "task__version")
    readonly_fields = ("task", "checksum", "changed_fields", "imported_at")
