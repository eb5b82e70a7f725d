"""Admin for every model. List views never show free text (rationales, factor text).

What participants saw and did is read-only here: a stored version's file (and its slug, version,
digest, conditions), a participant's assignment and progress, their page visits and answers. Studies
come only from ``load_study`` (validated; a changed file becomes a new version) and participants only
from the participant pages; the admin edits who owns a study and who shares it."""

from django.contrib import admin
from django.http import HttpRequest

from surveys.models import Answer, Condition, PageVisit, Participant, Study


class ReadOnlyFieldsMixin:
    """View only: every field shown read-only, no row added, changed or deleted through the admin (a
    participant leaves through withdrawal, which deletes their answers and frees their place)."""

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> list[str]:
        return [f.name for f in self.model._meta.concrete_fields if f.name not in (self.exclude or ())]

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "version", "title", "owner", "created_at"]
    list_filter = ["slug"]
    filter_horizontal = ["collaborators"]
    readonly_fields = ["slug", "version", "title", "spec", "spec_hash", "created_at"]
    fieldsets = [
        (None, {"fields": ["owner", "collaborators"]}),
        ("Stored version (read-only)", {"fields": ["slug", "version", "title", "spec_hash", "created_at"]}),
        ("Study file", {"fields": ["spec"], "classes": ["collapse"]}),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Condition)
class ConditionAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["study", "key", "label", "feature", "unit", "desirable", "cap"]


@admin.register(Participant)
class ParticipantAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = [
        "pseudonym",
        "study",
        "condition",
        "status",
        "position",
        "simulated",
        "pilot",
        "arrived_at",
        "completed_at",
    ]
    list_filter = ["study__slug", "status", "condition__key", "simulated", "pilot"]
    exclude = ["resume_code_hash"]
    search_fields = ["pseudonym"]

    def get_fieldsets(self, request: HttpRequest, obj=None) -> list:
        """The plan (one entry per page) folded away at the end."""
        fields = [f for f in self.get_readonly_fields(request, obj) if f not in ("id", "plan")]
        return [(None, {"fields": fields}), ("Plan", {"fields": ["plan"], "classes": ["collapse"]})]


@admin.register(PageVisit)
class PageVisitAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["participant", "page", "first_shown_at", "submitted_at", "refusals"]


@admin.register(Answer)
class AnswerAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["participant", "question", "measure", "number", "created_at"]
    list_filter = ["measure"]
