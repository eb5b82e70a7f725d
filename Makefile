# Two commands set everything up: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint serve clean

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Background jobs (analyses, audits, ... started from the web) run in `job_worker` processes beside
# the web server; JOB_WORKERS of them (default 1), each restarted 1 s after it dies (killed, crashed),
# stopped with the server. A worker outlives database restarts by itself (runs/worker.py).
JOB_WORKERS ?= 1
WORKERS = pids=""; for i in $$(seq $(JOB_WORKERS)); do \
	( trap 'kill $$w 2>/dev/null; exit 0' INT TERM; while :; do \
		$(PY) manage.py job_worker --interval 1 --no-startup-delay & w=$$!; wait $$w; \
		echo "job worker $$w exited ($$?); restarting it in 1 s" >&2; sleep 1; done ) & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null' EXIT INT TERM;

demo: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_setup
	$(WORKERS) $(PY) manage.py runserver 127.0.0.1:8000

# axe-core for the accessibility tests, from the npm registry (package-lock.json pins it).
NODE_STAMP := node_modules/.installed
$(NODE_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --silent --no-audit --no-fund && touch $(NODE_STAMP); \
	else echo "npm not found: the accessibility tests skip (CI requires them)"; fi

# The suite in TEST_WORKERS parallel processes (pytest-xdist; `auto`: one per core), each with its own
# test database (pytest-django suffixes its name _gw0, _gw1, ...) and its own servers on free ports;
# then, alone, the tests marked `serial` (they kill servers and workers and wait on leases: no neighbour may
# slow them). Any failure fails the run; the serial part's exit 5 (no test marked serial among those
# selected, e.g. with -k) is the one code accepted, and said.
TEST_WORKERS ?= auto
XDIST = -n $(TEST_WORKERS) --dist loadgroup
SERIAL_PART = $(PY) -m pytest -m serial $(PYTEST_ARGS) || { code=$$?; [ $$code -eq 5 ] || exit $$code; \
	echo "no test marked serial was selected: nothing to run apart"; }

test: $(STAMP) $(NODE_STAMP)
	$(PY) -m pytest $(XDIST) -m "not serial" $(PYTEST_ARGS)
	$(SERIAL_PART)

# The inner loop: no browser, no faults, no slow simulations, in parallel (README "Tests and CI").
test-fast: $(STAMP)
	$(PY) -m pytest $(XDIST) -m "not browser and not faults and not slow and not serial" $(PYTEST_ARGS)

# Production mode: gunicorn (gthread workers) + WhiteNoise; settings from the environment
# (DJANGO_DEBUG=0, DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS, DATABASE_URL; see README).
serve: $(STAMP)
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py check --deploy --fail-level WARNING
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py migrate --noinput
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py createcachetable
	DJANGO_DEBUG=$${DJANGO_DEBUG:-0} $(PY) manage.py collectstatic --noinput -v0
	export DJANGO_DEBUG=$${DJANGO_DEBUG:-0}; $(WORKERS) $(VENV)/bin/gunicorn config.wsgi -c config/gunicorn.conf.py

# The checks CI runs before the tests: ruff (lint and format), migrations in step with the models, the
# import contract (pyproject.toml [tool.importlinter]: packages import one way) and mypy with django-stubs.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) node_modules db.sqlite3* .test-db* staticfiles
