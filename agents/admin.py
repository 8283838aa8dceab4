"""Models and harnesses in the admin: staff register what a campaign runs."""
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import reverse

from .models import AgentModel, Harness


@admin.register(AgentModel)
class AgentModelAdmin(admin.ModelAdmin):
    """Models as workers call them. API keys stay in the workers' environment:
    `api_key_env` only names the variable."""

    list_display = ("name", "display_name", "kind", "provider", "litellm_model", "api_key_env", "open_weight", "is_scripted", "is_judge")
    list_filter = ("kind", "provider", "open_weight", "is_scripted", "is_judge")
    search_fields = ("name", "display_name", "litellm_model")
    actions = ["evaluate_model"]

    @admin.action(description="Evaluate model (start a campaign)")
    def evaluate_model(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Choose exactly one model to evaluate.", messages.ERROR)
            return None
        url = reverse("evaluations:campaign_new") + f"?model={queryset.get().pk}"
        return HttpResponseRedirect(url)


@admin.register(Harness)
class HarnessAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "import_path")
    search_fields = ("name", "import_path")
