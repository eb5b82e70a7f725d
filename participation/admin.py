"""Admin of what participants did, read-only: a participant's assignment and progress, their page
visits and answers (a participant leaves through withdrawal). List views never show free text
(rationales, factor text)."""

from django.contrib import admin
from django.http import HttpRequest

from core.readonly_admin import ReadOnlyFieldsMixin
from participation.models import Answer, ConflictingArrival, PageVisit, Participant


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


@admin.register(ConflictingArrival)
class ConflictingArrivalAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    """Later arrivals of a participant id with another SESSION_ID (possible id squatting)."""

    list_display = ["participant", "session_id", "arrived_at"]
    list_filter = ["participant__study__slug"]


@admin.register(PageVisit)
class PageVisitAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["participant", "page", "first_shown_at", "submitted_at", "refusals"]


@admin.register(Answer)
class AnswerAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["participant", "question", "measure", "number", "created_at"]
    list_filter = ["measure"]
