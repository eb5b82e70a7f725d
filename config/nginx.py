"""The reverse proxy of `make serve`: nginx (Debian's package) in front of gunicorn, its configuration
rendered from ``config/nginx.conf.template`` into a directory of its own (config, pid file, buffers).

Run: ``python -m config.nginx --listen 127.0.0.1:8000 --upstream 127.0.0.1:8001 --dir .nginx``
(nginx then runs in the foreground, replacing this process). ``NGINX_TLS_CERT`` and ``NGINX_TLS_KEY``
(paths) make it listen with TLS; without them it expects a TLS terminator in front, whose
``X-Forwarded-Proto`` it passes on.
"""

import argparse
import grp
import os
import pwd
import shutil
import stat
import subprocess
import time
from pathlib import Path
from string import Template
from typing import Any

from django.conf import settings

TEMPLATE = Path(__file__).with_name("nginx.conf.template")
TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
WORKER_USER = "nobody"  # nginx's own default for the workers of a master started as root


class _NginxTemplate(Template):
    delimiter = "@"  # nginx's variables use "$"


def nginx_binary() -> str:
    """The nginx executable (Debian installs it in /usr/sbin, often outside a user's PATH)."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if not found:
        raise FileNotFoundError("nginx is not installed: apt-get install nginx")
    return found


def render(
    directory: Path,
    *,
    listen: str,
    upstream: str,
    worker_processes: int = 1,
    tls_cert: str = "",
    tls_key: str = "",
) -> Path:
    """Write ``directory``/nginx.conf for nginx on ``listen`` (host:port) proxying to gunicorn on
    ``upstream`` (host:port, or ``unix:/path``), with its temporary directories; returns the file.
    The request-body limit is the largest request the app accepts: ``UPLOAD_MAX_BYTES`` of files plus
    ``DATA_UPLOAD_MAX_MEMORY_SIZE`` of fields, so the app, not nginx, refuses anything larger."""
    if bool(tls_cert) != bool(tls_key):
        raise ValueError("TLS needs both NGINX_TLS_CERT and NGINX_TLS_KEY")
    directory = directory.resolve()
    as_root = os.geteuid() == 0
    if as_root and not all(path.stat().st_mode & stat.S_IXOTH for path in directory.parents):
        raise PermissionError(
            f"nginx's workers run as {WORKER_USER} and could not reach {directory} to buffer large requests: "
            "put its directory (NGINX_DIR) where everyone may enter, e.g. /var/lib/fairness-nginx"
        )
    group = grp.getgrgid(pwd.getpwnam(WORKER_USER).pw_gid).gr_name if as_root else ""
    for name in ("", *TEMP_DIRS):
        path = directory / name
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o755)  # nginx's workers run as WORKER_USER when the master is root
        if as_root and name:
            shutil.chown(path, user=WORKER_USER, group=group)
    tls = f"ssl_certificate {tls_cert};\n        ssl_certificate_key {tls_key};" if tls_cert else ""
    text = _NginxTemplate(TEMPLATE.read_text()).substitute(
        user=f"user {WORKER_USER} {group};" if as_root else "",
        worker_processes=worker_processes,
        runtime=directory,
        upstream=upstream,
        listen=listen,
        ssl="ssl" if tls_cert else "",
        tls=tls,
        forwarded_proto="$scheme" if tls_cert else "$http_x_forwarded_proto",
        max_body=settings.UPLOAD_MAX_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    )
    conf = directory / "nginx.conf"
    conf.write_text(text)
    return conf


def command(conf: Path) -> list[str]:
    """nginx in the foreground with ``conf`` (its own prefix, errors on stderr)."""
    return [nginx_binary(), "-p", str(conf.parent), "-c", str(conf), "-e", "stderr", "-g", "daemon off;"]


def start(directory: Path, *, listen: str, upstream: str, timeout: float = 30.0, **popen: Any) -> subprocess.Popen:
    """Render the configuration into ``directory``, check it, start nginx (``popen``: keyword arguments
    of ``subprocess.Popen``, e.g. where its output goes) and return once it listens: nginx writes its
    pid file after opening its sockets."""
    conf = render(directory, listen=listen, upstream=upstream)
    subprocess.run([*command(conf), "-t", "-q"], check=True)
    pid_file = conf.parent / "nginx.pid"
    pid_file.unlink(missing_ok=True)
    proxy = subprocess.Popen(command(conf), **popen)
    deadline = time.monotonic() + timeout
    while not pid_file.exists():
        if proxy.poll() is not None or time.monotonic() > deadline:
            proxy.kill()
            raise RuntimeError(f"nginx did not start (exit code {proxy.wait()})")
        time.sleep(0.1)
    return proxy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", default="127.0.0.1:8000", help="host:port nginx listens on")
    parser.add_argument("--upstream", default=os.environ.get("GUNICORN_BIND", "127.0.0.1:8001"))
    parser.add_argument("--dir", type=Path, default=Path(".nginx"), help="its config, pid file and buffers")
    parser.add_argument("--worker-processes", type=int, default=int(os.environ.get("NGINX_WORKER_PROCESSES", 1)))
    args = parser.parse_args()
    conf = render(
        args.dir,
        listen=args.listen,
        upstream=args.upstream,
        worker_processes=args.worker_processes,
        tls_cert=os.environ.get("NGINX_TLS_CERT", ""),
        tls_key=os.environ.get("NGINX_TLS_KEY", ""),
    )
    argv = command(conf)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    main()
