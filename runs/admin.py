"""Admin of background jobs: view only, with the action "Cancel" for queued or running jobs (given
the ``runs.change_job`` permission; superusers have it)."""

from django.contrib import admin, messages
from django.http import HttpRequest

from core.readonly_admin import ReadOnlyFieldsMixin
from runs.models import Job
from runs.services import job_cancel


@admin.register(Job)
class JobAdmin(ReadOnlyFieldsMixin, admin.ModelAdmin):
    list_display = ["id", "kind", "status", "attempts", "study", "created_by", "created_at", "heartbeat_at"]
    list_filter = ["status", "kind"]
    actions = ["cancel_jobs"]

    @admin.action(description="Cancel the selected jobs (queued or running)", permissions=["cancel"])
    def cancel_jobs(self, request: HttpRequest, queryset) -> None:
        selected = list(queryset.values_list("pk", flat=True))
        cancelled = sum(job_cancel(job_id=pk, user=request.user) for pk in selected)
        self.message_user(
            request, f"{cancelled} of {len(selected)} jobs cancelled (the others had already ended).", messages.INFO
        )

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("runs.change_job")
