"""Self-contained HTML reports: a page skeleton, tables, and Plotly figures that load the
plotly.min.js written beside the report (from the installed plotly package; no CDN)."""

import html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from plotly.offline import get_plotlyjs

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:auto;padding:1rem;color:#1b1f24}"
    "table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}td,th{border:1px solid #ccc;padding:2px 6px}"
    "details{margin:.25rem 0}summary{cursor:pointer}"
)


def table(frame: pd.DataFrame, *, index: bool = False) -> str:
    return frame.to_html(index=index, border=0, float_format=lambda v: f"{v:.4f}", escape=True)


def figures_html(figures: Sequence) -> list[str]:
    """Plotly figures as HTML fragments; the first loads ./plotly.min.js."""
    return [
        f.to_html(full_html=False, include_plotlyjs="directory" if i == 0 else False) for i, f in enumerate(figures)
    ]


def write_page(out_dir: Path, title: str, parts: Sequence[str], name: str = "report.html") -> Path:
    """Write plotly.min.js and the page; ``parts`` are HTML fragments (already escaped)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "plotly.min.js").write_text(get_plotlyjs(), encoding="utf-8")
    page = (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>" + "\n".join(parts) + "</body></html>"
    )
    path = out_dir / name
    path.write_text(page, encoding="utf-8")
    return path
