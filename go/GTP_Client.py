"""The Go Text Protocol (GTP 2): a client that drives an opponent engine, and the parsing helpers an engine
script needs.

The client never trusts its opponent: a reply that does not come within ``timeout`` seconds (a hang), an
engine that exits or closes its output (a crash), a reply that is not ``= ...`` or ``? ...`` (malformed),
an error reply ``? ...`` and a move that is off the board or illegal all raise ``GTPError`` with the
reason, and the caller decides what to do (a match ends that game as "not played"). A response is
``=[id] text`` or ``?[id] text`` followed by an empty line; text may span lines (``showboard``).

GNU Go as the opponent: ``gnugo_command(level)`` is ``/usr/games/gnugo --mode gtp --chinese-rules
--positional-superko --capture-all-dead --level N`` (area scoring and positional superko, as ``Go_Board``).
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time

import numpy as np

from go.Go_Board import BLACK, WHITE, format_vertex, parse_vertex
from run.Input_Echo import shown

GNUGO_PATH = "/usr/games/gnugo"
#: How GNU Go is installed where it is missing (Debian and Ubuntu).
GNUGO_INSTALL_HINT = "install GNU Go with `apt-get install gnugo` (the binary is /usr/games/gnugo)"
#: A response: "=" or "?", an optional numeric id, then its text (after a space or a newline).
_RESPONSE = re.compile(r"([=?])\d*(?=\s|$)(.*)", re.DOTALL)
MAX_ID_DIGITS = 18  # a command id fits 64 bits (int() refuses strings of over 4,300 digits)
DEFAULT_TIMEOUT = 30.0  # seconds for one reply; GNU Go level 10 answers a small board in well under one


class GTPError(Exception):
    """Any failure of a GTP opponent: crash, hang, malformed or error reply, illegal move. ``reason`` is a
    short phrase for match reports ("timeout", "crash", "malformed", "error", "illegal")."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason


def gnugo_command(level: int = 10, path: str = GNUGO_PATH) -> list[str]:
    """The command line of GNU Go as a GTP opponent at ``level`` (0..10) under this project's rules."""
    if not 0 <= level <= 10:
        raise ValueError(f"GNU Go's level is 0..10, got {level}")
    rules = ["--chinese-rules", "--positional-superko", "--capture-all-dead"]
    return [path, "--mode", "gtp", *rules, "--level", str(level)]


# --------------------------------------------------------------------------- helpers shared with engines
#: The control characters a command line loses (all but tab and newline): a translation table, so that a
#: line of megabytes is cleaned at C speed.
_CONTROL = dict.fromkeys([*range(9), *range(11, 32), 127])


def clean_line(line: str) -> str:
    """A command line as GTP 2 prescribes before parsing: the comment after ``#`` removed, control
    characters other than tab and newline dropped, tabs made spaces, outer spaces stripped."""
    return line.split("#", 1)[0].translate(_CONTROL).replace("\t", " ").strip()


def is_ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def parse_command(line: str) -> tuple[int | None, str, list[str]] | None:
    """``(id, name, args)`` of one command line (``id`` None when absent), or None for a blank or comment
    line. The name is lower-cased. An id is ASCII digits; ValueError for one over ``MAX_ID_DIGITS``."""
    words = clean_line(line).split()
    if not words:
        return None
    command_id = None
    if is_ascii_digits(words[0]):  # str.isdigit also takes "²", which int() refuses
        if len(words[0]) > MAX_ID_DIGITS:
            raise ValueError(f"command id of {len(words[0])} digits: at most {MAX_ID_DIGITS}")
        command_id = int(words.pop(0))
        if not words:
            return command_id, "", []
    return command_id, words[0].lower(), words[1:]


def format_response(text: str = "", command_id: int | None = None, error: bool = False) -> str:
    """A GTP response: ``=id text`` (``?id text`` for an error) and the empty line that ends it."""
    head = ("?" if error else "=") + ("" if command_id is None else str(command_id))
    body = text.strip("\n")
    return f"{head} {body}\n\n" if body else f"{head}\n\n"


def parse_color(text: str) -> int:
    """``BLACK`` or ``WHITE`` of a GTP colour (``b``, ``black``, ``w``, ``white``, any case)."""
    word = text.strip().lower()
    if word in ("b", "black"):
        return BLACK
    if word in ("w", "white"):
        return WHITE
    raise ValueError(f"{shown(text)} is not a colour (black, white, b or w)")


def format_color(color: int) -> str:
    return "black" if color == BLACK else "white"


def parse_response(raw: str) -> tuple[bool, str]:
    """``(ok, text)`` of one raw response (its lines up to the empty line): ``ok`` for ``=``, the text
    after the id with outer whitespace removed; GTPError "malformed" when it starts with neither ``=``
    nor ``?`` or has a bad id."""
    match = _RESPONSE.match(raw.replace("\r", "").strip("\n"))
    if match is None:
        raise GTPError("malformed", f"reply {raw[:60]!r} is not '= ...' or '? ...'")
    return match.group(1) == "=", match.group(2).strip()


#: GTP 2's fixed handicap layouts (section 4.1.1), by number of stones: each point a (row, column) pair of
#: 0 (the line ``altitude`` from the low edge), 1 (the middle) or 2 (the line from the high edge), rows from
#: the bottom. On 19x19: 2 stones D4 Q16, 3 adds D16, 4 Q4, 5 K10; 6 D4 Q16 D16 Q4 D10 Q10, 7 adds K10;
#: 8 adds K4 K16 to 6, 9 K10.
_HANDICAP_LAYOUT = {
    2: "00 22", 3: "00 22 20", 4: "00 22 20 02", 5: "00 22 20 02 11", 6: "00 22 20 02 10 12",
    7: "00 22 20 02 10 12 11", 8: "00 22 20 02 10 12 01 21", 9: "00 22 20 02 10 12 01 21 11",
}  # fmt: skip


def max_fixed_handicap(size: int) -> int:
    """The most stones of ``fixed_handicap`` on a ``size`` board (GTP 2): none below 7x7, 4 on 7x7 and on
    even sizes (no middle line), 9 on odd sizes from 9x9."""
    if size < 7:
        return 0
    return 4 if size == 7 or size % 2 == 0 else 9


def fixed_handicap_points(stones: int, size: int) -> list[int]:
    """The actions of GTP 2's fixed handicap of ``stones`` on a ``size`` board: the 3-3 points' lines below
    13x13, the 4-4 points' from 13x13. ValueError "invalid number of stones" outside 2..``max_fixed_handicap``."""
    if not 2 <= stones <= max_fixed_handicap(size):
        raise ValueError("invalid number of stones")
    altitude = 2 if size < 13 else 3
    line = {"0": altitude, "1": (size - 1) // 2, "2": size - 1 - altitude}  # from the bottom or the left
    return [(size - 1 - line[row]) * size + line[col] for row, col in _HANDICAP_LAYOUT[stones].split()]


# --------------------------------------------------------------------------- the client
class GTPClient:
    """A GTP engine in a subprocess. ``GTPClient(command, timeout=30.0)``; use as a context manager or call
    ``close()``. Every method raises ``GTPError`` on any failure and never waits longer than ``timeout``
    seconds for a reply."""

    def __init__(self, command: list[str], timeout: float = DEFAULT_TIMEOUT):
        self.command = list(command)
        self.timeout = timeout
        self._buffer = b""
        #: The failure that left the engine out of step (a crash, a hang, a malformed reply): every later
        #: command raises it again rather than read a late reply as the answer to a new command.
        self.failure: GTPError | None = None
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError as error:
            raise GTPError("crash", f"cannot start {self.command[0]}: {error.strerror}") from error

    def __enter__(self) -> GTPClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Ask the engine to quit, then kill it if it has not exited within a second."""
        if self.process.poll() is None:
            try:
                self.process.stdin.write(b"quit\n")
                self.process.stdin.flush()
            except OSError:
                pass  # it already closed its input: kill it below
            try:
                self.process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()

    def _read_response(self, timeout: float) -> str:
        """The next response (up to its empty line) as text, within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n\n" not in self._buffer.replace(b"\r", b""):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise GTPError("timeout", f"no reply within {timeout:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                try:  # an engine that closed its output usually exits: wait a moment for its status
                    code = self.process.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    raise GTPError("crash", "the engine closed its output and still runs") from None
                raise GTPError("crash", f"the engine closed its output (exit status {code})")
            self._buffer += chunk
        self._buffer = self._buffer.replace(b"\r", b"")
        raw, _, self._buffer = self._buffer.partition(b"\n\n")
        return raw.decode("utf-8", errors="replace")

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command and return the text of its ``=`` reply; GTPError for a ``?`` reply ("error")
        or any failure."""
        if self.failure is not None:
            raise GTPError(self.failure.reason, f"the engine failed before {command!r} ({self.failure})")
        try:
            ok, text = self._exchange(command, self.timeout if timeout is None else timeout)
        except GTPError as error:
            self.failure = error
            raise
        if not ok:
            raise GTPError("error", f"{command!r} answered '? {text}'")
        return text

    def _exchange(self, command: str, timeout: float) -> tuple[bool, str]:
        """Write one command and parse its response."""
        if self.process.poll() is not None:
            raise GTPError("crash", f"the engine has exited (status {self.process.returncode})")
        try:
            self.process.stdin.write(command.encode() + b"\n")
            self.process.stdin.flush()
        except OSError as error:
            raise GTPError("crash", f"cannot send {command!r}: the engine closed its input") from error
        return parse_response(self._read_response(timeout))

    def setup(self, size: int, komi: float) -> None:
        """A new game: board size, komi and an empty board."""
        self.send(f"boardsize {size}")
        self.send(f"komi {komi}")
        self.send("clear_board")

    def play(self, color: int, action: int, size: int) -> None:
        """Tell the engine that ``color`` played ``action``."""
        self.send(f"play {format_color(color)} {format_vertex(action, size)}")

    def genmove(self, color: int, size: int, legal: np.ndarray | None = None) -> int | None:
        """The engine's move for ``color`` as an action (pass = ``size*size``), None when it resigns;
        GTPError "malformed" for a reply that is no vertex of the board, "illegal" when ``legal`` (the
        (N*N+1,) bool mask) forbids it."""
        reply = self.send(f"genmove {format_color(color)}")
        if reply.lower() == "resign":
            return None
        try:
            action = parse_vertex(reply, size)
        except ValueError as error:
            raise GTPError("malformed", f"genmove answered {reply[:40]!r}, not a move") from error
        if legal is not None and not legal[action]:
            raise GTPError("illegal", f"genmove answered the illegal move {format_vertex(action, size)}")
        return action

    def list_stones(self, size: int) -> np.ndarray:
        """The engine's board (N*N,) int8 from ``list_stones black`` and ``list_stones white`` (GNU Go)."""
        board = np.zeros(size * size, dtype=np.int8)
        for color in (BLACK, WHITE):
            for word in self.send(f"list_stones {format_color(color)}").split():
                try:
                    point = parse_vertex(word, size)
                except ValueError as error:
                    raise GTPError("malformed", f"list_stones answered {word!r}") from error
                if point == size * size:
                    raise GTPError("malformed", "list_stones answered 'pass'")
                board[point] = color
        return board
