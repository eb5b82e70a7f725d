"""Admin of studies: studies come only from ``load_study`` (validated; a changed file becomes a new
version); the admin edits who owns a study. Its collaborators are shown here, read-only: the owner
manages them on the study's dashboard, where each change is logged. A stored version's file, slug,
version, digest and conditions are read-only."""

from django.contrib import admin
from django.http import HttpRequest

from core.readonly_admin import ReadOnlyFieldsMixin
from studies.models import Collaborator, Condition, Study


class CollaboratorInline(admin.TabularInline):
    """The version's collaborators and roles, read-only (managed and logged on the dashboard)."""

    model = Collaborator
    fields = ("user", "role")
    readonly_fields = ("user", "role")
    extra = max_num = 0
    can_delete = False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "version", "title", "owner", "created_at"]
    list_filter = ["slug"]
    inlines = [CollaboratorInline]
    readonly_fields = ["slug", "version", "title", "spec", "spec_hash", "created_at"]
    fieldsets = [
        (None, {"fields": ["owner"]}),
        ("Stored version (read-only)", {"fields": ["slug", "version", "title", "spec_hash", "created_at"]}),
        ("Study file", {"fields": ["spec"], "classes": ["collapse"]}),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Condition)
class ConditionAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["study", "key", "label", "feature", "unit", "desirable", "cap"]
