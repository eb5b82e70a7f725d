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
accesslog = os.environ.get("GUNICORN_ACCESSLOG") or None
