"""A run storage that stalls in the middle of copying a run's files, for the fault tests: a
FileSystemStorage that, asked to save a file named ``block_on`` (``report.html``: a report's files are
copied in name order, so the CSVs before it are stored), writes the file's storage name into
``signal_file`` (the test's cue that the copy is half done) and sleeps ``block_seconds`` (the test
kills the process meanwhile). It blocks once: when ``signal_file`` exists, saves go through."""

import time
from pathlib import Path

from django.core.files.storage import FileSystemStorage


class BlockingStorage(FileSystemStorage):
    def __init__(
        self, *, signal_file: str, block_on: str = "report.html", block_seconds: float = 600, **options
    ) -> None:
        super().__init__(**options)
        self.signal_file = Path(signal_file)
        self.block_on = block_on
        self.block_seconds = block_seconds

    def _save(self, name, content):
        if Path(name).name == self.block_on and not self.signal_file.exists():
            self.signal_file.write_text(name)
            time.sleep(self.block_seconds)
        return super()._save(name, content)
