from django.contrib import admin  # noqa: F401


# -- Failure analysis (staff labels and their audit trail) -------------------
from .models import FailureLabel, LabelChange  # noqa: E402


@admin.register(FailureLabel)
class FailureLabelAdmin(admin.ModelAdmin):
    list_display = ("rollout", "cause", "updated_by", "updated_at")
    list_filter = ("cause",)
    search_fields = ("rollout__trial_name", "notes")
    raw_id_fields = ("rollout",)
    readonly_fields = ("updated_by", "updated_at")

    def save_model(self, request, obj, form, change):
        # Edits made here bypass failure_service.set_label; record them all the same.
        from .failure_service import label_values

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
