"""Admin of studies: studies come only from ``load_study`` (validated; a changed file becomes a new
version); the admin edits who owns a study. Its collaborators are shown here, read-only: the owner
manages them on the study's dashboard, where each change is logged. A stored version's file, slug,
version, digest and conditions are read-only."""

from django.contrib import admin
from django.http import HttpRequest

from core.readonly_admin import ReadOnlyFieldsMixin
from studies.models import Collaborator, Condition, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "version", "title", "owner", "created_at"]
    list_filter = ["slug"]
    readonly_fields = ["collaborator_roles", "slug", "version", "title", "spec", "spec_hash", "created_at"]
    fieldsets = [
        (None, {"fields": ["owner", "collaborator_roles"]}),
        ("Stored version (read-only)", {"fields": ["slug", "version", "title", "spec_hash", "created_at"]}),
        ("Study file", {"fields": ["spec"], "classes": ["collapse"]}),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="Collaborators (managed on the dashboard)")
    def collaborator_roles(self, study: Study) -> str:
        members = Collaborator.objects.filter(study=study).select_related("user").order_by("user__username")
        return ", ".join(f"{c.user.get_username()} ({c.role})" for c in members) or "-"


@admin.register(Condition)
class ConditionAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["study", "key", "label", "feature", "unit", "desirable", "cap"]
