"""The flags that build a Go agent, and their play defaults: ``--sims``, ``--c-puct``, ``--symmetric``,
``--precision`` and ``--game goN``, shared by gtp.py, the GUI (gui/Go_Gui.py) and the games of
``evaluate.py``/``test.py --game goN`` (go/Go_Match.py), which all build the agent through
``Arena.play_agent`` (gtp.py and Go_Match by ``agent_from_args``, the GUI by ``Go_Play.search_agent``); and
the resignation rule of ``--resign-threshold`` (``ResignRule``), which gtp.py and evaluate.py's matches share."""

from __future__ import annotations

import argparse
import collections
import math

from engine import Precision
from run import Cli

#: The agent's play settings (GTP, matches, the GUI; docs/go.md measures them): the seed's self-play searches
#: 30 simulations at c_puct 0.3 (the go5 and go7 recipes 64 at 1.0), but play is stronger with wider search
#: over more simulations and the network read under the 8 board symmetries (``Arena.SymmetricEvaluator``).
#: 200 simulations on 5x5; on larger boards 400: on 7x7 the search passed too early at 100 and 200 and lost
#: 30% of its games as Black against GNU Go, and won every one at 400.
DEFAULT_SIMULATIONS = 200
LARGE_BOARD_SIMULATIONS = 400
DEFAULT_C_PUCT = 1.0
DEFAULT_SYMMETRIC = True
#: float32 by default, so that a match's games are the same on every CPU; bf16 (or auto) plays faster where
#: the CPU multiplies it natively (``Precision``), e.g. for matches at equal time.
DEFAULT_PRECISION = "fp32"
#: Resignation (``--resign-threshold``): the chosen move's value below the threshold this many of the
#: agent's moves in a row (KataGo's resignConsecTurns), so that one gloomy search does not end a game.
RESIGN_MOVES = 3


def default_simulations(size: int) -> int:
    """The agent's simulations a move on a ``size`` x ``size`` board (the play defaults above)."""
    return DEFAULT_SIMULATIONS if size <= 5 else LARGE_BOARD_SIMULATIONS


def add_agent_flags(parser: argparse.ArgumentParser) -> None:
    """``--sims``, ``--c-puct``, ``--symmetric`` and ``--precision``: the agent's search, with the play defaults
    (``resolve_agent_flags`` sets ``--sims`` from the board once the flags are read)."""
    parser.add_argument(
        "--sims",
        type=Cli.simulations,
        help=f"the agent's simulations a move (default: {DEFAULT_SIMULATIONS} on 5x5, "
        f"{LARGE_BOARD_SIMULATIONS} on larger boards)",
    )
    parser.add_argument("--c-puct", type=Cli.c_puct, default=DEFAULT_C_PUCT, help="the agent's PUCT constant")
    parser.add_argument(
        "--symmetric",
        action=argparse.BooleanOptionalAction,
        default=DEFAULT_SYMMETRIC,
        help="the agent averages its network over the board's 8 symmetries (Arena.SymmetricEvaluator)",
    )
    parser.add_argument(
        "--precision",
        choices=Precision.PRECISIONS,
        default=DEFAULT_PRECISION,
        help=Precision.help_text("the agent's search", "a 7x7 move 1.13x as fast") + f" (default: {DEFAULT_PRECISION})",
    )


def resolve_agent_flags(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with ``--sims`` given its board's default (``args.game``: the size) when it was not set."""
    if args.sims is None:
        args.sims = default_simulations(args.game)
    return args


def agent_from_args(model, args: argparse.Namespace, **kw):
    """The agent of ``add_agent_flags``'s flags (``--sims``, ``--c-puct``, ``--symmetric``, ``--precision``):
    ``Arena.play_agent``, the one function that builds the agent of gtp.py, the GUI (by ``Go_Play.search_agent``)
    and ``evaluate.py --game goN``
    (``kw``: its ``device``, ``rng``, ``sample_moves``, ``name``, ``wrap``)."""
    from go.Arena import play_agent  # torch: imported once the flags are read (a fast --help)

    return play_agent(model, args.sims, args.c_puct, args.symmetric, precision=args.precision, **kw)


def go_name(text: str) -> int:
    """argparse type of ``--game``: ``goN`` with N from 5 to 19 -> N."""
    digits = text.lower().removeprefix("go")
    if not text.lower().startswith("go") or not Cli.is_ascii_digits(digits) or not 5 <= int(digits) <= 19:
        raise argparse.ArgumentTypeError(f"must be go5 ... go19, got {text!r}")
    return int(digits)


class ResignRule:
    """When the agent resigns: once the value of its chosen move (-1..1, its own estimate:
    ``Arena.SearchPlayer.last_value``) has been below ``threshold`` for ``RESIGN_MOVES`` of its moves in a row,
    counted by colour (a GTP controller may ask it for either colour's moves); ``threshold`` None: never. One
    rule for gtp.py's ``genmove`` and evaluate.py's matches, so that a match resigns where a GTP game would."""

    def __init__(self, threshold: float | None = None):
        self.threshold = threshold
        self.new_game()

    def new_game(self) -> None:
        self.low = collections.Counter()  # colour -> the agent's moves in a row valued below the threshold

    def apply(self, colour: int, action: int | None, value: float) -> int | None:
        """``action``, the agent's chosen move for ``colour`` valued ``value``, or None where it resigns instead
        (a resignation already chosen, None, stays one and counts nothing)."""
        if self.threshold is None or action is None:
            return action
        self.low[colour] = self.low[colour] + 1 if value < self.threshold else 0
        return None if self.low[colour] >= RESIGN_MOVES else action


def resign_threshold(text: str) -> float:
    """argparse type of ``--resign-threshold`` (gtp.py, evaluate.py's matches): a value in -1..1 (the agent's
    values lie there)."""
    try:
        value = Cli.strict_float(text)
    except ValueError:
        value = math.nan
    if not -1 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a value between -1 and 1, got {text[: Cli.MAX_NUMBER_CHARS]!r}")
    return value
