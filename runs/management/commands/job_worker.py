"""``manage.py job_worker``: ``db_worker`` with each job run in a supervised child process and the
worker kept alive through database restarts (``runs/worker.py``). Same options; never reloads."""

import logging

from django.core.management.base import CommandError
from django_tasks_db.management.commands import db_worker

from runs import worker as worker_module
from runs.worker import JobWorker


class Command(db_worker.Command):
    help = "Run background jobs, each in a supervised child process; survives database restarts (no --reload)"

    def configure_logging(self, verbosity: int) -> None:
        """The library's levels, and the same for the worker's own lines (``runs.worker``: start, idle,
        an idle heartbeat), which the root handler prints."""
        super().configure_logging(verbosity)
        logging.getLogger(worker_module.__name__).setLevel(
            logging.CRITICAL if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
        )

    def handle(  # type: ignore[override]  # the library's options, --reload ignored
        self,
        *,
        verbosity: int,
        queue_name: str,
        exclude_queues: str,
        interval: float,
        batch: bool,
        backend_name: str,
        startup_delay: bool,
        max_tasks: int | None,
        worker_id: str,
        **options,
    ) -> None:
        self.configure_logging(verbosity)
        queue_names = queue_name.split(",")
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = JobWorker(
            queue_names=queue_names,
            excluded_queue_names=excluded,
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=worker_id,
        )
        worker.configure_signals()
        worker.run()
