"""The clock of a GTP game: the time settings a controller gives (GTP 2 ``time_settings``, KGS's
``kgs-time_settings``), the time it says is left (``time_left``), the engine's own account of its time between
those, and how long the engine's next move may think (``Clock.budget``).

Time systems (``TimeSettings.kind``):

* ``none``: no clock (also GTP 2's ``time_settings M B 0`` with ``B > 0``, the spec's "no time limits").
* ``absolute``: ``main`` seconds for the whole game (``time_settings M 0 S``; ``M = 0``: no time at all).
* ``canadian``: ``main`` seconds, then periods of ``period`` seconds for ``count`` stones each
  (``time_settings M B S`` with ``B, S > 0``).
* ``byoyomi`` (Japanese, ``kgs-time_settings byoyomi M B P``): ``main`` seconds, then ``count`` periods of
  ``period`` seconds; a move that takes longer than a period uses up that period. KGS's ``time_left`` gives the
  periods left where GTP gives stones.

The budget of a move (``Clock.budget``): in main time, the main time left shared among the moves the player
is still expected to play (``moves_left``: half the board's points minus the moves played, at least a sixth of
the points), plus what a byo-yomi period that follows gives a move; in byo-yomi, the period's time a stone
(Canadian) or the period (Japanese). Every figure is then cut by ``SAFETY_FRACTION`` and ``SAFETY_SECONDS``
(the controller's and the pipe's lag, a search step that overruns its check, the move's own bookkeeping),
and never passes what is left before the clock falls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

KINDS = ("none", "absolute", "canadian", "byoyomi")
#: A clock's time is used at most to this share, less ``SAFETY_SECONDS``: a 5-second byo-yomi move thinks
#: 4.25 s. The rest covers the pipe's and the controller's lag and one search step past the deadline.
SAFETY_FRACTION = 0.1
SAFETY_SECONDS = 0.25
#: Time settings beyond this (about 115 days) mean nothing to a game; GTP numbers are bounded anyway.
MAX_SECONDS = 1e7
MAX_STONES = 1_000_000


@dataclass(frozen=True)
class TimeSettings:
    """One time system: ``kind`` (``KINDS``), ``main`` seconds, ``period`` seconds of byo-yomi and its
    ``count`` (Canadian: stones a period; Japanese: periods)."""

    kind: str = "none"
    main: float = 0.0
    period: float = 0.0
    count: int = 0

    @classmethod
    def from_gtp(cls, main: float, period: float, stones: int) -> TimeSettings:
        """GTP 2's ``time_settings main_time byo_yomi_time byo_yomi_stones`` (Canadian byo-yomi)."""
        if period > 0 and stones == 0:
            return cls("none")  # the spec's "no time limits"
        if period == 0:
            return cls("absolute", main)
        return cls("canadian", main, period, stones)

    @classmethod
    def from_kgs(cls, words: list[str], number, count) -> TimeSettings:
        """KGS's ``kgs-time_settings none | absolute M | byoyomi M B P | canadian M B S``; ``number`` and
        ``count`` parse a seconds and a count argument (ValueError, a sentence, for a bad one)."""
        kind = words[0].lower() if words else ""
        arity = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}.get(kind)
        if arity is None or len(words) != 1 + arity:
            raise ValueError("kgs-time_settings needs none, absolute M, byoyomi M B P or canadian M B S")
        if kind == "none":
            return cls("none")
        main = number(words[1])
        if kind == "absolute":
            return cls("absolute", main)
        period, stones = number(words[2]), count(words[3])
        if kind == "canadian":
            return cls.from_gtp(main, period, stones)
        if period == 0 or stones == 0:  # no byo-yomi periods: the main time is all there is
            return cls("absolute", main)
        return cls("byoyomi", main, period, stones)


@dataclass
class Account:
    """One player's clock as the engine knows it: ``main`` seconds of main time left, then, in byo-yomi
    (``in_byoyomi``), ``period`` seconds left of the current period and ``count`` stones (Canadian) or
    periods (Japanese) left."""

    main: float
    period: float = 0.0
    count: int = 0
    in_byoyomi: bool = False


def moves_left(points: int, moves_played: int) -> float:
    """The moves a player is still expected to play: half the board's points minus the moves played so far
    (a game lasts about as many moves as the board has points), at least a sixth of the points."""
    return max(points / 6, (points - moves_played) / 2, 1.0)


def usable(seconds: float) -> float:
    """What of ``seconds`` on a clock a move may think: ``SAFETY_FRACTION`` and ``SAFETY_SECONDS`` kept back."""
    return max(0.0, seconds * (1 - SAFETY_FRACTION) - SAFETY_SECONDS)


@dataclass
class Clock:
    """Both players' clocks under ``settings``: reset by ``set`` and ``restart`` (a new game), corrected by
    ``time_left``, run down by ``spend`` (the engine's own moves), read by ``budget``."""

    settings: TimeSettings = field(default_factory=TimeSettings)
    accounts: dict[int, Account] = field(default_factory=dict)

    def set(self, settings: TimeSettings) -> None:
        self.settings = settings
        self.restart()

    def restart(self) -> None:
        """Full clocks for both players (``clear_board``: a new game under the same settings)."""
        self.accounts = {colour: Account(self.settings.main) for colour in (1, -1)}
        for account in self.accounts.values():
            if self.settings.kind in ("canadian", "byoyomi") and self.settings.main == 0:
                self._enter_byoyomi(account, 0.0)

    def time_left(self, colour: int, seconds: float, count: int) -> None:
        """GTP's ``time_left colour time stones``: ``count`` 0 while main time runs, else the stones left in the
        Canadian period, or KGS's periods left of Japanese byo-yomi. Without a clock it is ignored."""
        if self.settings.kind == "none":
            return
        account = self.accounts[colour]
        seconds = max(0.0, seconds)  # a controller that lags may report a clock just below zero
        if count == 0 or self.settings.kind == "absolute":
            account.main, account.in_byoyomi = seconds, False
        else:
            account.main, account.period, account.count, account.in_byoyomi = 0.0, seconds, count, True

    def budget(self, colour: int, points: int, moves_played: int) -> float | None:
        """Seconds the next move of ``colour`` may think (None: no clock), on a board of ``points`` points
        after ``moves_played`` moves of the game."""
        s, account = self.settings, self.accounts.get(colour)
        if s.kind == "none" or account is None:
            return None
        if account.in_byoyomi:
            now = account.period / account.count if s.kind == "canadian" else account.period
            return usable(now)
        # In main time: a share of it, topped up by what a byo-yomi period gives a move once it runs out,
        # and never past the main time left plus that one move of byo-yomi.
        after = 0.0 if s.kind == "absolute" else s.period / s.count if s.kind == "canadian" else s.period
        share = account.main / moves_left(points, moves_played) + after
        return usable(min(share, account.main + after))

    def spend(self, colour: int, seconds: float) -> None:
        """``colour``'s move took ``seconds``: its clock as the engine then expects it to read."""
        s, account = self.settings, self.accounts.get(colour)
        if s.kind == "none" or account is None:
            return
        if not account.in_byoyomi:
            if seconds <= account.main or s.kind == "absolute":
                account.main = max(0.0, account.main - seconds)
                return
            seconds -= account.main
            account.main = 0.0
            self._enter_byoyomi(account, 0.0)
        if s.kind == "canadian":
            account.period -= seconds
            account.count -= 1
            if account.count <= 0:  # the period's stones are played: a fresh period
                self._enter_byoyomi(account, 0.0)
        else:  # Japanese: a move within the period keeps it; each whole period overrun is lost
            lost = math.floor(seconds / s.period) if s.period > 0 else account.count
            account.count = max(0, account.count - lost)
            account.period = s.period

    def _enter_byoyomi(self, account: Account, used: float) -> None:
        account.in_byoyomi, account.main = True, 0.0
        account.period, account.count = self.settings.period - used, self.settings.count
