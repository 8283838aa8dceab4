from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html

from evaluations.models import Campaign, Entry, PublishedFigure, PublishedResult
from evaluations.running import lifecycle


# --- Leaderboard settings and published results (read by evaluations.boards.compute and published_entries) ---


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin):
    """Per-entry leaderboard flags; saving one refreshes the cached boards."""

    list_display = ("model", "harness", "version", "ablation", "in_comparison", "humans_compete", "note")
    list_filter = ("version", "ablation", "in_comparison")
    list_editable = ("ablation", "in_comparison")
    search_fields = ("model__name", "harness__name", "note")
    raw_id_fields = ("model", "harness")


@admin.register(PublishedResult)
class PublishedResultAdmin(admin.ModelAdmin):
    list_display = ("model", "harness", "version", "task", "rollout_index", "score", "source", "ablation", "compared",
                    "imported_at")
    list_editable = ("compared",)  # staff include an ablation in the published comparison here
    list_filter = ("version", "source", "ablation", "compared")
    search_fields = ("model__name", "task__name", "source")
    raw_id_fields = ("model", "harness", "task")


@admin.register(PublishedFigure)
class PublishedFigureAdmin(admin.ModelAdmin):
    list_display = ("model", "harness", "version", "scope", "measure", "value", "source", "ablation", "imported_at")
    list_filter = ("version", "measure", "source", "ablation")
    search_fields = ("model__name", "source")
    raw_id_fields = ("model", "harness")


# --- Evaluation runner: campaigns (evaluations.running.campaigns); models and harnesses are the agents app's ---



class CampaignForm(forms.ModelForm):
    class Meta:
        model = Campaign
        fields = ("model", "harness", "version", "tasks", "k", "backend", "notes")
        help_texts = {"tasks": "Leave empty for every task of the version."}

    def clean(self):
        data = super().clean()
        version, tasks = data.get("version"), data.get("tasks")
        if version and tasks and any(task.version_id != version.pk for task in tasks):
            raise forms.ValidationError("Every task must belong to the chosen benchmark version.")
        if data.get("k") is not None and data["k"] < 1:
            raise forms.ValidationError("k must be at least 1.")
        if version and not tasks and not version.tasks.exists():
            raise forms.ValidationError(f"{version} has no tasks.")
        return data


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    """Adding a campaign creates its rollouts and enqueues them."""

    form = CampaignForm
    list_display = ("id", "model", "harness", "version", "k", "backend", "status", "progress_link", "created_at")
    list_filter = ("status", "backend", "version")
    filter_horizontal = ("tasks",)
    actions = ["reevaluate_campaigns", "cancel_campaigns"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ("status",)
        return ("model", "harness", "version", "tasks", "k", "backend", "status", "created_by", "started_at",
                "finished_at", "progress_link")

    @admin.display(description="progress")
    def progress_link(self, obj):
        return format_html('<a href="{}">live grid</a>', reverse("evaluations:campaign_detail", args=[obj.pk]))

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
            lifecycle.begin(obj, checked_first=True)  # a worker checks it first, as the launch page's do
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        if not change:
            from evaluations.running.campaigns import send_preflight

            campaign = form.instance
            transaction.on_commit(lambda: send_preflight(campaign))
            self.message_user(request, f"Campaign {campaign.pk}: a worker checks it, then its rollouts start.",
                              messages.SUCCESS)

    @admin.action(description="Re-evaluate (new rollouts; the old ones become superseded)")
    def reevaluate_campaigns(self, request, queryset):
        from evaluations.running.campaigns import reevaluate

        for campaign in queryset:
            new = reevaluate(campaign, created_by=request.user, preflight=True)
            self.message_user(request, f"Campaign {new.pk} re-evaluates campaign {campaign.pk}.", messages.SUCCESS)

    @admin.action(description="Cancel campaigns")
    def cancel_campaigns(self, request, queryset):
        from evaluations.running import campaigns

        n = sum(campaigns.cancel(campaign, detail=f"cancelled by {request.user.get_username()}") for campaign in queryset)
        self.message_user(request, f"{n} rollouts cancelled.", messages.SUCCESS)
