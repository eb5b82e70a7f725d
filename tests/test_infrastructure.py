"""The real components CI must provide, and production settings."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.conftest import ROOT, required, run_id


def test_database_is_postgresql_when_ci_requires_it(db):
    if required("REQUIRE_POSTGRES"):
        assert connection.vendor == "postgresql", "CI requires PostgreSQL but tests ran on " + connection.vendor
    else:
        assert connection.vendor in ("sqlite", "postgresql")


def test_an_sqlite_test_database_is_this_runs_own(db):
    if connection.vendor != "sqlite":
        pytest.skip("a PostgreSQL test database is named by the server")
    assert Path(connection.settings_dict["NAME"]).name.endswith(f"_{run_id()}")
    assert connection.settings_dict["NAME"].startswith(str(ROOT / ".test-db.sqlite3"))


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "x" * 64 + "production-like-secret-for-the-check",
        "DJANGO_ALLOWED_HOSTS": "fairness.example.org",
        "SQLITE_PATH": str(tmp_path / "db.sqlite3"),
    }
    env.pop("DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_settings_refuse_to_start_without_a_secret(tmp_path):
    env = {**os.environ, "DJANGO_DEBUG": "0", "SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    env.pop("DJANGO_SECRET_KEY", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_cache_url_gives_the_cache_backends():
    import pytest
    from django.core.exceptions import ImproperlyConfigured

    from config.cache_url import cache_from_url

    assert cache_from_url("locmem://")["BACKEND"].endswith("LocMemCache")
    assert cache_from_url("db://fairness_cache") == {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "fairness_cache",
    }
    assert cache_from_url("file:///var/tmp/c")["LOCATION"] == "/var/tmp/c"
    assert cache_from_url("redis://127.0.0.1:6379/1")["LOCATION"] == "redis://127.0.0.1:6379/1"
    assert cache_from_url("memcached://127.0.0.1:11211")["LOCATION"] == "127.0.0.1:11211"
    with pytest.raises(ImproperlyConfigured):
        cache_from_url("ftp://nowhere")
