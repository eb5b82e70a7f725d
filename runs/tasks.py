"""The one task the worker runs: execute a Job by its id (django-tasks, database backend)."""

from django_tasks import task

from runs.execution import execute_job


@task()
def run_job(job_id: str) -> str:
    """Run the job and return its final status (the job row holds its result, log and error)."""
    return execute_job(job_id)
