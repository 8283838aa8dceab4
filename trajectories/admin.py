from django.contrib import admin

from trajectories.models import (
    FailureLabel,
    LabelChange,
    Observation,
    Rollout,
    RolloutEvent,
    Step,
    SubTrajectory,
    ToolCall,
    UploadJob,
)

# -- Failure analysis (staff labels and their audit trail) -------------------


@admin.register(FailureLabel)
class FailureLabelAdmin(admin.ModelAdmin):
    list_display = ("rollout", "cause", "updated_by", "updated_at")
    list_filter = ("cause",)
    search_fields = ("rollout__trial_name", "notes")
    raw_id_fields = ("rollout",)
    readonly_fields = ("updated_by", "updated_at")

    def save_model(self, request, obj, form, change):
        # Edits made here bypass failure_service.set_label; record them all the same.
        from trajectories.failures.service import label_values

        old = label_values(FailureLabel.objects.filter(pk=obj.pk).first()) if obj.pk else {}
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)
        new = label_values(obj)
        if old != new:
            LabelChange.objects.create(rollout=obj.rollout, user=request.user, old=old, new=new)


@admin.register(LabelChange)
class LabelChangeAdmin(admin.ModelAdmin):
    list_display = ("rollout", "user", "changed_at")
    search_fields = ("rollout__trial_name",)
    readonly_fields = ("rollout", "user", "changed_at", "old", "new")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# -- Rollouts and their trajectories (import) -----------------------------------


class ReadOnlyInline(admin.TabularInline):
    """Imported rows: shown for reference, changed only by re-importing."""

    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True

    def get_readonly_fields(self, request, obj=None):
        return self.fields


class StepInline(ReadOnlyInline):
    model = Step
    fields = ("position", "step_id", "source", "timestamp", "elapsed_sec", "kinds", "metric_value", "prompt_tokens", "completion_tokens")
    ordering = ("position",)

    def get_queryset(self, request):
        # Main trajectory only; subagent steps appear under their SubTrajectory.
        return super().get_queryset(request).filter(subtrajectory__isnull=True)


class SubStepInline(ReadOnlyInline):
    model = Step
    fk_name = "subtrajectory"
    fields = StepInline.fields
    ordering = ("position",)


class SubTrajectoryInline(ReadOnlyInline):
    model = SubTrajectory
    fk_name = "rollout"
    fields = ("name", "agent_name", "session_id", "parent_step")


class RolloutEventInline(ReadOnlyInline):
    """The runner's state changes (queued -> running -> ...), oldest first."""

    model = RolloutEvent
    fields = ("at", "status", "detail")
    show_change_link = False


@admin.register(Rollout)
class RolloutAdmin(admin.ModelAdmin):
    list_display = (
        "trial_name", "task", "model", "harness", "index", "status", "reward",
        "n_steps", "n_benchmark_calls", "outcome", "infra_error", "superseded", "imported_at",
    )
    list_filter = ("status", "outcome", "failure_cause", "infra_error", "superseded", "task__version", "model", "harness", "task__category")
    search_fields = ("trial_name", "trial_id", "job_id", "task__name", "model__name")
    list_select_related = ("task", "model", "harness")
    raw_id_fields = ("task", "model", "harness", "campaign")
    date_hierarchy = "started_at"
    readonly_fields = ("checksum", "source_path", "schema_version", "validation_warnings", "imported_at", "updated_at")
    inlines = [RolloutEventInline, SubTrajectoryInline, StepInline]


class StepChildInline(ReadOnlyInline):
    fields = ("position", "call_id", "function_name", "arguments")


class ToolCallInline(StepChildInline):
    model = ToolCall
    fields = ("position", "call_id", "function_name", "arguments", "kinds")


class ObservationInline(StepChildInline):
    model = Observation
    fields = ("position", "source_call_id", "tool_call", "content")


@admin.register(Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ("__str__", "rollout", "subtrajectory", "step_id", "source", "timestamp", "kinds", "metric_value")
    list_filter = ("source", "metric_status")
    search_fields = ("rollout__trial_name",)
    list_select_related = ("rollout", "subtrajectory")
    raw_id_fields = ("rollout", "subtrajectory")
    inlines = [ToolCallInline, ObservationInline]

    def has_add_permission(self, request):
        return False


@admin.register(SubTrajectory)
class SubTrajectoryAdmin(admin.ModelAdmin):
    list_display = ("name", "rollout", "agent_name", "session_id", "parent_step")
    search_fields = ("name", "session_id", "rollout__trial_name")
    list_select_related = ("rollout", "parent_step")
    raw_id_fields = ("rollout", "parent_step")
    inlines = [SubStepInline]


# -- Uploads (imported in the background by trajectories.storing.uploads) ----


@admin.register(UploadJob)
class UploadJobAdmin(admin.ModelAdmin):
    """Read-only: a job's state is the worker's to write; staff follow it or look back."""

    list_display = ("id", "file_name", "status", "done", "total", "created_by", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("file_name", "error")
    readonly_fields = [field.name for field in UploadJob._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
