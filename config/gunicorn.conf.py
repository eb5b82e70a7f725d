"""gunicorn settings for `make serve` (each overridable by its GUNICORN_* environment variable)."""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() * 2))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", 2))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", 30))
graceful_timeout = 20
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", 0))
# Load the app (and config.warm_up: views, participant templates, the newest studies' content) once in
# the master before forking, so freshly started workers answer their first requests at full speed.
preload_app = os.environ.get("GUNICORN_PRELOAD", "1") != "0"
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None
