"""The reading and answering load of a served study page, measured by the server on the HTML it sends:
the words of text in the page's ``<main>`` (its questions, options, descriptions and charts' captions;
the header with the title, progress and withdraw link is not counted) and the questions it asks (form
inputs a participant sets, counted by name: a radio group is one; hidden fields are not). Stored with
the page's visit when it is saved, so the answer-quality rule ``hurried`` (``research.quality``) can
compare the time the server saw on the page with its load; nothing here comes from the client."""

import re
from dataclasses import dataclass
from html.parser import HTMLParser

_WORD = re.compile(r"\w+(?:['’-]\w+)*")
_SKIPPED = {"script", "style", "template"}
_FIELDS = {"input", "select", "textarea"}
_NOT_ANSWERS = {"hidden", "submit", "button", "reset", "image"}


@dataclass(frozen=True)
class PageLoad:
    """``words`` of text shown and ``inputs`` (questions) asked by a page."""

    words: int
    inputs: int


class _Counter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # inside <main>
        self.skipped = 0  # inside <script>, <style>, <template>
        self.words = 0
        self.names: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "main":
            self.depth += 1
        elif tag in _SKIPPED:
            self.skipped += 1
        if tag in _FIELDS and self.depth:
            found = dict(attrs)
            if tag != "input" or (found.get("type") or "text") not in _NOT_ANSWERS:
                self.names.add(found.get("name") or f"#{len(self.names)}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "main":
            self.depth = max(0, self.depth - 1)
        elif tag in _SKIPPED:
            self.skipped = max(0, self.skipped - 1)

    def handle_data(self, data: str) -> None:
        if self.depth and not self.skipped:
            self.words += len(_WORD.findall(data))


def measure_page_load(html: str) -> PageLoad:
    """The :class:`PageLoad` of a page's HTML (words in ``<main>`` outside scripts; named inputs)."""
    counter = _Counter()
    counter.feed(html)
    counter.close()
    return PageLoad(counter.words, len(counter.names))
