from django.contrib import admin

from submissions.models import Submission, SubmissionEvent, Team


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at")
    filter_horizontal = ("members",)


class EventInline(admin.TabularInline):
    model = SubmissionEvent
    extra = 0
    can_delete = False
    readonly_fields = ("from_state", "to_state", "by", "note", "at")


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    """Read-only here: a submission's state changes only through its review page (submissions.services)."""

    list_display = ("pk", "team", "version", "model_name", "harness_name", "state", "mark", "created_at")
    list_filter = ("state", "mark", "version")
    inlines = [EventInline]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
