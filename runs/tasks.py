"""The one task the worker runs: execute a Job by its id (django-tasks, database backend)."""

from django_tasks import task


@task()
def run_job(job_id: str) -> str:
    """Run the job and return its final status (the job row holds its result, log and error). The runners
    (pandas, scipy, statsmodels) are imported here, in the worker: a web process that queues a job does not
    load them (10.9 s on the first upload of a busy web worker when this module imported them)."""
    from runs.execution import execute_job

    return execute_job(job_id)
