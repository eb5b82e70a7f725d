# Two commands set everything up: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint serve clean docs docs-serve screenshots

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Background jobs (analyses, audits, ... started from the web) run in `job_worker` processes beside
# the web server; JOB_WORKERS of them (default 1), each restarted 1 s after it dies (killed, crashed),
# stopped with the server. A worker outlives database restarts by itself (runs/worker.py).
JOB_WORKERS ?= 1
PORT ?= 8000
WORKERS = pids=""; for i in $$(seq $(JOB_WORKERS)); do \
	( trap 'kill $$w 2>/dev/null; exit 0' INT TERM; while :; do \
		$(PY) manage.py job_worker --interval 1 --no-startup-delay & w=$$!; wait $$w; \
		echo "job worker $$w exited ($$?); restarting it in 1 s" >&2; sleep 1; done ) & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null' EXIT INT TERM;

# The demo on 127.0.0.1:PORT (default 8000: `PORT=8100 make demo`); the participant link and the researcher's
# credentials are printed last, once the server accepts connections (after its and the workers' start-up lines).
demo: export SITE_URL ?= http://127.0.0.1:$(PORT)
demo: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup --no-links --host http://127.0.0.1:$(PORT)
	$(WORKERS) $(PY) manage.py demo_setup --links-only --host http://127.0.0.1:$(PORT) --wait-for-server 120 & \
		pids="$$pids $$!"; $(PY) manage.py runserver 127.0.0.1:$(PORT)

# axe-core for the accessibility tests, from the npm registry (package-lock.json pins it).
NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --silent --no-audit --no-fund && touch $(NODE_STAMP); \
	else echo "npm not found: the accessibility tests skip (CI requires them)"; fi

# The suite in TEST_WORKERS parallel processes (pytest-xdist; default 4 on any machine: many tests wait on
# servers, job workers and browsers, and bench/suite_makespan.py simulates 4 workers on 2 cores finishing the
# parallel part 35-45% sooner than 2; `auto`: one per core), each with its own
# test database (pytest-django suffixes its name _gw0, _gw1, ...) and its own servers on free ports;
# then, alone, the tests marked `serial` (they kill servers and workers and wait on leases: no neighbour may
# slow them). Any failure fails the run; the serial part's exit 5 (no test marked serial among those
# selected, e.g. with -k) is the one code accepted, and said.
TEST_WORKERS ?= 4
XDIST = -n $(TEST_WORKERS) --dist loadgroup
# Bytecode caches written even where the environment says not to (PYTHONDONTWRITEBYTECODE): without them every
# worker, server and job process the tests start compiles the project again, and pytest rewrites every test
# module's asserts again (about 15 CPU seconds of each worker's collection).
PYTEST := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest
SERIAL_PART = $(PYTEST) -m serial $(PYTEST_ARGS) || { code=$$?; [ $$code -eq 5 ] || exit $$code; \
	echo "no test marked serial was selected: nothing to run apart"; }

test: $(STAMP) $(NODE_STAMP)
	$(PYTEST) $(XDIST) -m "not serial" $(PYTEST_ARGS)
	$(SERIAL_PART)

# The inner loop: no browser, no faults, no slow simulations, in parallel (docs: Run the tests fast).
test-fast: $(STAMP)
	$(PYTEST) $(XDIST) -m "not browser and not faults and not slow and not serial" $(PYTEST_ARGS)

# Production mode: nginx (Debian's package; config/nginx.conf.template) on PORT in front of gunicorn
# (gthread workers, config/gunicorn.conf.py) on APP_PORT (default PORT + 2) + WhiteNoise; nginx holds the participants'
# connections and hands gunicorn whole requests. Settings from the environment (DJANGO_DEBUG=0,
# DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS, DATABASE_URL; see the docs, Run in production).
APP_PORT ?= $(shell expr $(PORT) + 2)
NGINX_LISTEN ?= 127.0.0.1:$(PORT)
NGINX_DIR ?= .nginx
serve: $(STAMP)
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py check --deploy --fail-level WARNING
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py migrate --noinput
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py createcachetable
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py collectstatic --noinput -v0
	export DJANGO_DEBUG=$${DJANGO_DEBUG:-0} GUNICORN_BIND=$${GUNICORN_BIND:-127.0.0.1:$(APP_PORT)} \
		PARTICIPANT_ADDRESS_HEADER=$${PARTICIPANT_ADDRESS_HEADER-X-Forwarded-For}; $(WORKERS) \
	$(PY) -m config.nginx --listen $(NGINX_LISTEN) --upstream $$GUNICORN_BIND --dir $(NGINX_DIR) & \
		pids="$$pids $$!"; $(VENV)/bin/gunicorn config.wsgi -c config/gunicorn.conf.py

# The checks CI runs before the tests: ruff (lint and format), migrations in step with the models, the
# import contract (pyproject.toml [tool.importlinter]: packages import one way) and mypy with django-stubs.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# The documentation site (mkdocs.yml, docs/): built into site/ with --strict (a broken link, a missing page or
# a reference to a missing object fails); the reference pages are generated from the code (docs/_gen/).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(VENV)/bin/mkdocs build --strict --site-dir site

# The docs' screenshots, regenerated (not pasted): the browser tests of the participant pages (every page
# kind, 1280 and 390 px), the dashboard, the builder and the reports keep theirs in docs/images/ (headless
# Chromium at /usr/bin/chromium, tests/surveys/test_e2e_browser.py's flags).
screenshots: $(STAMP)
	mkdir -p docs/images/participant docs/images/dashboard docs/images/reports docs/images/builder
	SCREENSHOT_DIR=docs/images/participant DASHBOARD_SCREENSHOTS=docs/images/dashboard \
	REPORT_SCREENSHOTS=docs/images/reports BUILDER_SCREENSHOTS=docs/images/builder \
	$(PY) -m pytest -q -p no:cacheprovider tests/participation/test_format2_browser.py \
		tests/surveys/test_dashboard_browser.py tests/surveys/test_report_browser.py tests/studies/test_builder_browser.py

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(VENV)/bin/mkdocs serve --dev-addr $${DOCS_ADDR:-127.0.0.1:8001}

clean:
	rm -rf $(VENV) node_modules db.sqlite3* .test-db* staticfiles site .nginx
