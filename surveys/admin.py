"""Admin for every model. List views never show free text (rationales, factor text)."""

from django.contrib import admin

from surveys.models import (
    Answer,
    Comparison,
    Condition,
    DisagreementPrompt,
    PageVisit,
    Participant,
    StimulusSet,
    Study,
    Subject,
)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "version", "title", "owner", "created_at"]
    list_filter = ["slug"]
    filter_horizontal = ["collaborators"]
    readonly_fields = ["spec_hash", "created_at"]


@admin.register(Condition)
class ConditionAdmin(admin.ModelAdmin):
    list_display = ["study", "key", "label", "feature", "unit", "desirable"]


@admin.register(Subject)
class SubjectAdmin(admin.ModelAdmin):
    list_display = ["key", "condition", "risk_score", "label"]
    list_filter = ["condition__study__slug", "condition__key"]


class ComparisonInline(admin.TabularInline):
    model = Comparison
    extra = 0


@admin.register(StimulusSet)
class StimulusSetAdmin(admin.ModelAdmin):
    list_display = ["key", "condition", "reference"]
    inlines = [ComparisonInline]


@admin.register(Comparison)
class ComparisonAdmin(admin.ModelAdmin):
    list_display = ["stimulus_set", "subject", "relation"]


@admin.register(DisagreementPrompt)
class DisagreementPromptAdmin(admin.ModelAdmin):
    list_display = ["key", "condition", "subject"]


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
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
    readonly_fields = ["pseudonym", "seed", "plan", "arrived_at", "resume_failures", "resume_failed_at"]
    exclude = ["resume_code_hash"]
    search_fields = ["pseudonym"]


@admin.register(PageVisit)
class PageVisitAdmin(admin.ModelAdmin):
    list_display = ["participant", "page", "first_shown_at", "submitted_at", "refusals"]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["participant", "question", "measure", "number", "created_at"]
    list_filter = ["measure"]
