"""Where a report's parts are: its dashboard address (:func:`report_address`, printed by the commands),
and the static files it loads (styles, Plotly, the figure and section-menu scripts), addressed relative to the
report as ``report-assets/<name>``: a command copies them beside the ``report.html`` it writes, so
the file opens from disk (file://, no server, no network) with its styles and figures; on the web,
where only the flat files of a run are stored, :func:`report_asset` redirects the same relative
addresses to the site's static files."""

import shutil
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.templatetags.static import PrefixNode
from django.urls import reverse

ASSETS_DIR = "report-assets"
REPORT_ASSETS = (
    "surveys/site.css",
    "surveys/report.css",
    "vendor/plotly.min.js",
    "surveys/figures.js",
    "surveys/report_nav.js",
)


def copy_report_assets(out_dir: Path) -> None:
    """Copy every report asset into ``out_dir/report-assets/`` (a copy of the same size is kept)."""
    for name in REPORT_ASSETS:
        source = Path(str(finders.find(name)))
        target = out_dir / ASSETS_DIR / name
        if target.exists() and target.stat().st_size == source.stat().st_size:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def report_address(url_name: str, run_id: int) -> str:
    """The dashboard address of a stored run's report (``SITE_URL`` + the run file's path)."""
    return settings.SITE_URL + reverse(url_name, args=[run_id, "report.html"])


def report_asset(request: HttpRequest, name: str) -> HttpResponseRedirect:
    """A stored report's ``report-assets/<name>``: the static file of that name (stable, unhashed
    name, as reports outlive a deployment's hashed names); 404 for anything else."""
    if name not in REPORT_ASSETS:
        raise Http404("No such report asset.")
    return HttpResponseRedirect(PrefixNode.handle_simple("STATIC_URL") + name)
