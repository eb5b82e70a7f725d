"""Static files are served compressed: production's storage (WhiteNoise's compressed manifest storage, which
`make serve` fills with collectstatic) writes a Brotli and a gzip copy of each file, and WhiteNoise serves
the smallest one the browser accepts (Plotly's 4.8 MB bundle: 1.1 MB as Brotli, 1.5 MB as gzip)."""

import shutil
from pathlib import Path

from django.conf import settings
from whitenoise.compress import Compressor

ROOT = Path(settings.BASE_DIR)


def test_collectstatic_writes_brotli_and_gzip_copies(tmp_path):
    """WhiteNoise writes a ``.br`` copy only when the Brotli package is installed (requirements.txt)."""
    script = tmp_path / "charts.js"
    shutil.copy(ROOT / "static" / "surveys" / "charts.js", script)
    written = list(Compressor(quiet=True).compress(str(script)))
    assert sorted(Path(name).suffix for name in written) == [".br", ".gz"]
    assert all(Path(name).stat().st_size < script.stat().st_size for name in written)
