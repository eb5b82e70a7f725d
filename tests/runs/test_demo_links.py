"""``make demo`` on any port, the participant link and the researcher's credentials printed last: the
recipe (``make -n``) and ``demo_setup --links-only --wait-for-server``, which waits for the server."""

import io
import socket
import subprocess
import threading

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from runs.management.commands import demo_setup


@pytest.fixture
def password_file(tmp_path, monkeypatch):
    path = tmp_path / ".demo-password"
    path.write_text("s3cret\n")
    monkeypatch.setattr(demo_setup, "PASSWORD_FILE", path)
    return path


def _recipe(*args: str) -> list[str]:
    out = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed", *args], cwd=settings.BASE_DIR, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_port_chooses_where_the_demo_serves_and_the_links_come_last():
    recipe = " ".join(_recipe("demo", "PORT=8417"))
    assert "demo_setup --no-links --host http://127.0.0.1:8417" in recipe
    assert "runserver 127.0.0.1:8417" in recipe and "8000" not in recipe
    # the links wait for the server in the background, started after the job workers
    workers, links = recipe.index("job_worker"), recipe.index("--links-only --host http://127.0.0.1:8417")
    assert workers < links < recipe.index("runserver")
    assert "runserver 127.0.0.1:8000" in " ".join(_recipe("demo"))


def test_serve_puts_gunicorn_beside_the_chosen_port():
    recipe = " ".join(_recipe("serve", "PORT=8420"))
    assert "--listen 127.0.0.1:8420" in recipe and "GUNICORN_BIND:-127.0.0.1:8422" in recipe
    assert "GUNICORN_BIND:-127.0.0.1:8301" in " ".join(_recipe("serve", "PORT=8420", "APP_PORT=8301"))


def test_links_only_waits_for_the_server_then_prints_the_credentials(password_file):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    threading.Timer(0.5, listener.listen).start()  # the server comes up after the command starts waiting
    out = io.StringIO()
    try:
        call_command("demo_setup", links_only=True, host=f"http://127.0.0.1:{port}", wait_for_server=10, stdout=out)
    finally:
        listener.close()
    text = out.getvalue()
    assert f"Participant link : http://127.0.0.1:{port}/s/effort-demo/?participant_label=demo-" in text
    assert f"Researcher login : http://127.0.0.1:{port}/accounts/login/  user 'researcher', password 's3cret'" in text


def test_links_only_says_when_no_server_comes_up(password_file):
    with socket.socket() as probe:  # a port no one listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CommandError, match=f"no server at http://127.0.0.1:{port} after 0.5 s"):
        call_command("demo_setup", links_only=True, host=f"http://127.0.0.1:{port}", wait_for_server=0.5)


def test_links_only_needs_a_prepared_demo(tmp_path, monkeypatch):
    monkeypatch.setattr(demo_setup, "PASSWORD_FILE", tmp_path / "missing")
    with pytest.raises(CommandError, match="no demo prepared here"):
        call_command("demo_setup", links_only=True)
