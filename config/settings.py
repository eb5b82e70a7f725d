"""Settings, driven entirely by environment variables (every one in the docs: reference/environment.md, generated).

Defaults suit a developer's machine: DEBUG on, SQLite file ``db.sqlite3``. Production sets
``DJANGO_DEBUG=0``, ``DJANGO_SECRET_KEY``, ``DJANGO_ALLOWED_HOSTS`` and usually ``DATABASE_URL``.
"""

import json
from datetime import timedelta
from pathlib import Path

import dj_database_url

from config.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me" if DEBUG else None)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks",
    "django_tasks_db",
    "surveys",
    "studies",
    "participation",
    "research",
    "runs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

SQLITE_PATH = env_str("SQLITE_PATH", str(BASE_DIR / "db.sqlite3"))
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{SQLITE_PATH}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside the writer; IMMEDIATE takes the write lock when a transaction
    # starts, so read-then-write services (balanced assignment) cannot interleave; the timeout
    # makes concurrent writers queue instead of failing with "database is locked".
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "timeout": env_int("SQLITE_TIMEOUT_SECONDS", 30),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / ".test-db.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"  # researcher pages; participant pages: the participant's language
TIME_ZONE = "UTC"
USE_I18N = True
# The platform's own texts on participant pages (studies.translation.PLATFORM_LANGUAGES): English, and
# German from locale/de/LC_MESSAGES/django.po (the compiled .mo is committed). Researcher pages are English.
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

# Run files (reports, tables, uploads of jobs) go through Django's storage API, addressed by run:
# a local folder (REPORTS_DIR) by default; STORAGE_BACKEND / STORAGE_OPTIONS (JSON) select any
# django-storages backend (S3, GCS, Azure) so that every web server and worker sees every run.
REPORTS_DIR = Path(env_str("REPORTS_DIR", str(BASE_DIR / "reports")))
STORAGE_DEFAULT = {
    "BACKEND": env_str("STORAGE_BACKEND", "django.core.files.storage.FileSystemStorage"),
    "OPTIONS": json.loads(env_str("STORAGE_OPTIONS", "{}")) or {"location": str(REPORTS_DIR)},
}

# Where researchers open the site: commands print a report's dashboard address under it.
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "config.staticfinders.PlotlyFinder",
]
STORAGES = {
    "default": STORAGE_DEFAULT,
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "researcher:studies"
LOGOUT_REDIRECT_URL = "login"


# Security: cookies and HTTPS are strict unless DEBUG (the local demo) is on.
# Sessions: researchers, admin, API and login use revocable database sessions (accounts app,
# cookie `sessionid`); participants' pages (/s/) use signed cookies (`participant_session`,
# config/sessions.py), so no participant request needs a session query. See the accounts block below.
SESSION_ENGINE = "accounts.session_store"
SESSION_COOKIE_HTTPONLY = True
SECURE_COOKIES = env_bool("DJANGO_SECURE_COOKIES", not DEBUG)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DJANGO_MAX_BODY_BYTES", 2_621_440)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["research.api.permissions.IsResearcher"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Every list is paged: ?limit= (default 100, at most 1000) and ?offset=; the body is
    # {"count", "next", "previous", "results"} (research/api/pagination.py).
    "DEFAULT_PAGINATION_CLASS": "research.api.pagination.ApiPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    # one name for a study's lifecycle states wherever the API shows them (studies.models.Study.Status)
    "ENUM_NAME_OVERRIDES": {
        "StudyStatusEnum": "studies.lifecycle.STATUS_CHOICES",
        "JobStatusEnum": ["queued", "running", "succeeded", "failed", "cancelled"],
    },
    "TITLE": "Human-calibrated fairness API",
    "DESCRIPTION": (
        "Studies, participants, tidy exports and background jobs, for researchers only, each seeing their own "
        "studies ([back to your studies](/researcher/)). Authenticate with your session, an API token "
        "(`Authorization: Token hcf_...`, from the [API tokens page](/researcher/api-tokens/)) or HTTP basic auth. "
        "Lists are paged: `limit` (default 100, at most 1000) and "
        "`offset`; the body has `count`, `next`, `previous` and `results`. Errors share one format: "
        "`{status, code, detail, fields}`."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["research.api.permissions.IsResearcher"],
    # /api/docs/: Swagger UI from drf-spectacular-sidecar's static files (no CDN), its start-up script
    # a separate file (SpectacularSwaggerSplitView) under script-src 'self'; no online validator.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "research.api.schema.add_error_responses",
    ],
}

# Exports the API pages through, kept per worker (research/export.py): at most this many bytes.
EXPORT_CACHE_MAX_BYTES = env_int("EXPORT_CACHE_MAX_BYTES", 128 * 1024 * 1024)

# Uploads (core/uploads.py, config/upload_handlers.py): every uploaded CSV is bounded in size,
# rows, columns and parse time; a multipart request is stopped once its files exceed
# UPLOAD_MAX_BYTES (DATA_UPLOAD_MAX_MEMORY_SIZE does not count files). API errors share one JSON
# format (research/api/errors.py). Study files are bounded too (studies/study_file.py).
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 20 * 1024 * 1024)
UPLOAD_MAX_ROWS = env_int("UPLOAD_MAX_ROWS", 1_000_000)
UPLOAD_MAX_COLUMNS = env_int("UPLOAD_MAX_COLUMNS", 1_000)
UPLOAD_MAX_PARSE_SECONDS = env_int("UPLOAD_MAX_PARSE_SECONDS", 60)
STUDY_FILE_MAX_BYTES = env_int("STUDY_FILE_MAX_BYTES", 5 * 1024 * 1024)
STUDY_MAX_PAGES_PER_PARTICIPANT = env_int("STUDY_MAX_PAGES_PER_PARTICIPANT", 500)
FILE_UPLOAD_HANDLERS = [
    "config.upload_handlers.UploadLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
REST_FRAMEWORK["EXCEPTION_HANDLER"] = "research.api.errors.api_exception_handler"
REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] = [
    "research.api.parsers.BoundedJSONParser",
    "rest_framework.parsers.FormParser",
    "rest_framework.parsers.MultiPartParser",
]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "WARNING")},
}

# Background jobs (analyses, audits, situation testing, differential parity started from the web):
# django-tasks with its database backend; workers run `manage.py job_worker` (`make demo` and
# `make serve` start and restart them). A job running longer than JOB_MAX_SECONDS fails with a clear
# error; one still running JOB_KILL_GRACE_SECONDS later (stuck in a C call) is killed by its worker.
# A running job whose worker gave no sign of life for JOB_LEASE_SECONDS (killed, machine or database
# gone) is marked failed by any other worker, or queued again once if its kind is retry-safe
# (runs.models.Job.RETRY_SAFE_KINDS).
TASKS = {"default": {"BACKEND": "django_tasks_db.backend.DatabaseBackend"}}
JOB_MAX_SECONDS = env_int("JOB_MAX_SECONDS", 1800)
JOB_KILL_GRACE_SECONDS = env_int("JOB_KILL_GRACE_SECONDS", 10)
JOB_LEASE_SECONDS = env_int("JOB_LEASE_SECONDS", 30)
# Jobs run at this much lower CPU priority (nice) than their worker: participants' requests first.
JOB_NICENESS = env_int("JOB_NICENESS", 10)
# Most jobs one researcher may have queued or running at once (429 beyond); each further job of theirs
# gets a lower task priority, so one researcher's burst does not starve the others' jobs.
JOBS_QUEUED_PER_RESEARCHER = env_int("JOBS_QUEUED_PER_RESEARCHER", 5)
# Prolific's researcher API (research/prolific_client.py): the token is sent to Prolific only, never logged,
# exported or shown; PROLIFIC_API_URL points tests at a local fake server. Webhook deliveries to
# /hooks/prolific/ are signed with the workspace's PROLIFIC_WEBHOOK_SECRET. The job worker reconciles each
# published study's submissions every PROLIFIC_SYNC_MINUTES (research/prolific_tasks.py).
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN", "")
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = env_str("PROLIFIC_WEBHOOK_SECRET", "")
PROLIFIC_WORKSPACE_ID = env_str("PROLIFIC_WORKSPACE_ID", "")
PROLIFIC_SYNC_MINUTES = env_int("PROLIFIC_SYNC_MINUTES", 10)

# --- Content-Security-Policy (django-csp 4.x) -----------------------------------------------------
# Every response forbids inline script: pages load scripts from our own static files only and pass
# data in <script type="application/json"> blocks (json_script). Reports are files served from
# this origin, so the policy also keeps a script smuggled into one of them from running.
from csp.constants import NONE, SELF, UNSAFE_INLINE  # noqa: E402

INSTALLED_APPS += ["csp"]
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1, "csp.middleware.CSPMiddleware")
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        "img-src": [SELF, "data:", "blob:"],  # Plotly's "download as PNG" builds data:/blob: images
        # Plotly.js sets inline style attributes and injects a <style> element for its charts; styles
        # cannot run code, scripts stay strictly 'self'.
        "style-src": [SELF, UNSAFE_INLINE],
    },
}

# --- Accounts and sessions (accounts/, config/sessions.py, config/cache_control.py) ------------
# Researchers' sessions are server-side (logout, password change and "log out everywhere" end
# them); participants keep signed-cookie sessions under their own cookie, limited to /s/.
INSTALLED_APPS += ["accounts", "axes"]
MIDDLEWARE[MIDDLEWARE.index("django.contrib.sessions.middleware.SessionMiddleware")] = (
    "config.sessions.PathSessionMiddleware"
)
MIDDLEWARE.insert(
    MIDDLEWARE.index("whitenoise.middleware.WhiteNoiseMiddleware") + 1, "config.cache_control.NoStoreMiddleware"
)
MIDDLEWARE.append("axes.middleware.AxesMiddleware")  # turns a locked-out login into accounts.lockout's page
SESSION_COOKIE_AGE = env_int("RESEARCHER_SESSION_COOKIE_AGE", 12 * 3600)
PARTICIPANT_PATH_PREFIX = "/s/"
PARTICIPANT_SESSION_COOKIE_NAME = "participant_session"
PARTICIPANT_SESSION_COOKIE_AGE = env_int("PARTICIPANT_SESSION_COOKIE_AGE", 2 * 24 * 3600)
NO_STORE_PATH_PREFIXES = ["/s/", "/researcher/", "/api/", "/accounts/", "/admin/"]
# Login throttling (django-axes) on the login page, the admin login, HTTP basic auth and API tokens on the API.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# The API token class comes first: DRF answers missing or bad credentials with the first class's
# WWW-Authenticate challenge (a 401 offering Token and Basic), where a session first gives a 403.
REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"] = [
    "accounts.authentication.ApiTokenAuthentication",
    "rest_framework.authentication.SessionAuthentication",
    "accounts.authentication.ThrottledBasicAuthentication",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
_LOGIN_COOLOFF_MINUTES = env_int("LOGIN_COOLOFF_MINUTES", 15)
AXES_COOLOFF_TIME = timedelta(minutes=_LOGIN_COOLOFF_MINUTES) if _LOGIN_COOLOFF_MINUTES > 0 else None
# "username+ip_address": one username from one address; "username,ip_address": either one.
AXES_LOCKOUT_PARAMETERS = [
    part.split("+") if "+" in part else part for part in env_list("LOGIN_LOCKOUT_PARAMETERS", "username+ip_address")
]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
# The same client address as the participants' limits (PARTICIPANT_ADDRESS_HEADER behind a proxy;
# an IPv6 client counted by its /64).
AXES_CLIENT_IP_CALLABLE = "participation.throttle.client_network"
# Researchers' API tokens (accounts/services.py): how long a new one lasts, how many one user may
# hold (0: no expiry, no limit).
API_TOKEN_MAX_AGE_DAYS = env_int("API_TOKEN_MAX_AGE_DAYS", 90)
API_TOKENS_PER_USER = env_int("API_TOKENS_PER_USER", 10)
# --- Participants: browser binding, resume codes, per-address limits (participation/throttle.py) ---
# A returning participant's browser must hold their session, or bring Prolific's SESSION_ID of
# the attempt, or their resume code. New arrivals and failed resume codes are counted per client
# address in the cache (CACHE_URL, see config/cache_url.py; the default per-process memory counts
# per gunicorn worker). 0 switches a limit off (bench/launch.py does, all its participants come
# from 127.0.0.1).
from config.cache_url import cache_from_url  # noqa: E402

CACHES = {"default": cache_from_url(env_str("CACHE_URL", "locmem://"))}
PARTICIPANT_ARRIVALS_PER_ADDRESS = env_int("PARTICIPANT_ARRIVALS_PER_ADDRESS", 30)
PARTICIPANT_RESUME_FAILURES_PER_ADDRESS = env_int("PARTICIPANT_RESUME_FAILURES_PER_ADDRESS", 20)
PARTICIPANT_LIMIT_WINDOW_SECONDS = env_int("PARTICIPANT_LIMIT_WINDOW_SECONDS", 600)
PARTICIPANT_RESUME_MAX_FAILURES = env_int("PARTICIPANT_RESUME_MAX_FAILURES", 5)  # per participant ...
PARTICIPANT_RESUME_LOCK_SECONDS = env_int("PARTICIPANT_RESUME_LOCK_SECONDS", 900)  # ... then locked this long
# The request header that carries the client's address behind a reverse proxy (e.g.
# X-Forwarded-For: its last entry, the one the proxy added, is used); empty: REMOTE_ADDR.
PARTICIPANT_ADDRESS_HEADER = env_str("PARTICIPANT_ADDRESS_HEADER", "")
