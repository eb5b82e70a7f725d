"""How a simulated person spends their time on a study page and what the page's script would count
(``participation.signals``), so that every answer-quality rule (``research.quality``) has a false-flag rate
under a stated model of careful people.

A person (:func:`draw_reader`) has
- a reading speed ``wpm`` ~ lognormal, median 238 words a minute, sigma 0.25 on the log scale (Brysbaert
  2019, "How many words do we read per minute?", J. Memory and Language 109: 238 wpm silent reading of
  English non-fiction, most adults between 175 and 300);
- ``familiar_share`` ~ uniform(0.4, 0.9): the share of a page's words they read when the page's layout is
  one they have just seen (the next page of the same block: only the new case is read);
- a median inter-key interval ``iki`` ~ lognormal, median 0.24 s, sigma 0.3 (Dhakal, Feit, Kristensson &
  Oulasvirta, CHI 2018: mean 238.7 ms over 168,000 people), each key's interval lognormal around it
  (sigma 0.35), and a typo rate of 1% of the characters, each corrected with a backspace and the right key
  (keys = characters + 2 x typos);
- per question: a decision and a pointer movement, the Keystroke-Level Model's M + P + click = 1.35 + 1.1
  + 0.2 s (Card, Moran & Newell 1980), lognormal with sigma 0.4 around it;
- per page: with probability ``away_rate`` (0.1) a glance at another window (one focus loss) that adds a
  lognormal pause (median 5 s, sigma 0.6); the page's HTML reaches the browser 0.05-0.4 s after the server
  recorded it as shown, so the script's time on the page is that much shorter than the server's.

Nobody pastes. Scripted, so a rule's share of these people flagged measures its tolerance to this model,
not its rate among real participants: pilot it.
"""

from dataclasses import dataclass

import numpy as np

KLM_SECONDS_PER_INPUT = 1.35 + 1.1 + 0.2


@dataclass(frozen=True)
class Reader:
    """One simulated person's reading, answering and typing (see the module)."""

    wpm: float
    familiar_share: float
    iki: float
    away_rate: float = 0.1
    typo_rate: float = 0.01


@dataclass(frozen=True)
class PageInteraction:
    """A page as the server and the script would see it: ``seconds`` from shown to received (server) and
    the script's counts, in the order of its ``signals`` field (``participation.signals.COLUMNS``: ms on
    the page, focus losses, pastes, pasted characters, keys, typing ms, characters in text fields)."""

    seconds: float
    signals: tuple[int, int, int, int, int, int, int]


def draw_reader(rng: np.random.Generator) -> Reader:
    """A person's reading speed, skimming of familiar pages and typing speed (see the module)."""
    return Reader(
        wpm=float(rng.lognormal(np.log(238), 0.25)),
        familiar_share=float(rng.uniform(0.4, 0.9)),
        iki=float(rng.lognormal(np.log(0.24), 0.3)),
    )


def typing(reader: Reader, chars: int, rng: np.random.Generator) -> tuple[int, float]:
    """Keys pressed and seconds from the first to the last key to type ``chars`` characters."""
    if chars <= 0:
        return 0, 0.0
    keys = chars + 2 * int(rng.binomial(chars, reader.typo_rate))
    return keys, float(rng.lognormal(np.log(reader.iki), 0.35, size=keys - 1).sum())


def page_interaction(
    reader: Reader, *, words: int, inputs: int, typed_chars: int, familiar: bool, rng: np.random.Generator
) -> PageInteraction:
    """The time the person spends on a page showing ``words`` words and asking ``inputs`` questions, of which
    text fields take ``typed_chars`` characters; ``familiar``: its layout is the one they just saw."""
    read = words * (reader.familiar_share if familiar else 1.0) * 60 / reader.wpm
    answer = float(rng.lognormal(np.log(KLM_SECONDS_PER_INPUT), 0.4, size=inputs).sum()) if inputs else 0.0
    keys, typed = typing(reader, typed_chars, rng)
    away = int(rng.random() < reader.away_rate)
    pause = float(rng.lognormal(np.log(5), 0.6)) if away else 0.0
    on_page = read + answer + typed + pause
    latency = float(rng.uniform(0.05, 0.4))
    return PageInteraction(on_page + latency, (int(on_page * 1000), away, 0, 0, keys, int(typed * 1000), typed_chars))
