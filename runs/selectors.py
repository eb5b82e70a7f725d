"""Reads: which jobs a researcher may see."""

from django.db.models import Q, QuerySet

from runs.models import Job
from studies.selectors import may_edit, studies_visible_to


def jobs_visible_to(user) -> QuerySet[Job]:
    """Jobs of the studies the user may see now (so a removed collaborator loses the jobs they
    started), and the jobs tied to no study that they started (situation testing); all for superusers."""
    if not user.is_authenticated or not user.is_active:
        return Job.objects.none()
    jobs = Job.objects.select_related("study")
    if user.is_superuser:
        return jobs
    return jobs.filter(Q(study__isnull=True, created_by=user) | Q(study__in=studies_visible_to(user))).distinct()


def may_cancel(user, job: Job) -> bool:
    """Whether ``user``, who sees ``job``, may cancel it: anyone who may edit its study (owner, editor,
    superuser; not a viewer); for a job tied to no study, its creator or a superuser."""
    if job.study is None:
        return bool(user.is_superuser or job.created_by_id == user.pk)
    return may_edit(user, job.study.slug)
