"""How an error message quotes the input it refuses: at most ``MAX_SHOWN_CHARS`` characters of it, then
``...``. A pasted file can hold megabytes on one line, and a 10 MB error sentence helps no one (a GTP
controller gets it as one reply). Standard library only: the game modules, ``Cli`` and the scripts use it."""

from __future__ import annotations

MAX_SHOWN_CHARS = 40


def shown(text: str, quote: bool = True) -> str:
    """``text`` as an error message quotes it: ``repr`` (``quote``) or as it is, cut after ``MAX_SHOWN_CHARS``
    characters with ``...``."""
    cut = text[:MAX_SHOWN_CHARS]
    return (repr(cut) if quote else cut) + ("..." if len(text) > MAX_SHOWN_CHARS else "")
