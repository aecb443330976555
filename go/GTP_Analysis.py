"""Live analysis for GTP controllers (Sabaki, Lizzie, GoGui scripts): the arguments of Leela Zero's
``lz-analyze`` and KataGo's ``kata-analyze`` (and Sabaki's plain ``analyze``), and the ``info`` lines of a
search tree in their formats.

One line holds every candidate move: ``info move C3 visits 190 winrate 0.871 prior 0.62 lcb 0.80 order 0 pv C3
D3 ...`` (``kata``: winrate, prior and lcb as fractions, always with a decimal point, which is how Sabaki tells
them from Leela's integers; ``lz``: the same times 10,000, rounded to integers), for the player the
analysis is for (the side to move unless a colour is given). A move's numbers:

* ``visits``: the search's visits of the root's edge; ``winrate``: its mean return ``Q`` (in -1..1) as
  ``(Q + 1) / 2``; ``prior``: the network's prior (read under the 8 symmetries with ``--symmetric``).
* ``lcb``: ``winrate - 0.98 / sqrt(visits)``, clipped to 0..1 (0 without visits): 1.96 standard errors of a
  mean of values in 0..1, whose variance is at most 1/4. The search keeps no variance of its own.
* ``order``: the rank by visits (ties: the lower point first, as the move choice breaks them), so ``order 0``
  is the move ``genmove`` would play; ``pv``: the move, then the most visited reply at each level below.
* ``scoreLead`` (and ``scoreMean``, its old name), ``kata`` only: the expected final margin in points for the
  player after the move, when the agent can give one (``Arena.SearchPlayer.score_leads``: a network with a
  score head); without one the field is left out.

The lines list the visited moves, best first; ``minmoves N`` adds unvisited legal moves (by prior) up to
``N``, ``maxmoves N`` keeps the first ``N``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from engine.Search_Tree import N_ROW, UNVISITED, W_ROW, SearchTree
from go.Go_Board import format_vertex
from go.GTP_Client import parse_color
from run import Cli
from run.Input_Echo import shown

FORMATS = ("lz", "kata")
#: The interval (centiseconds) of an analysis whose command names none: Sabaki and Lizzie always name one.
DEFAULT_INTERVAL_CS = 100
MAX_INTERVAL_CS = 8_640_000  # a day
MAX_MOVES_SHOWN = 10_000
#: The memory a search tree may take (``Search_Tree.SearchTree.node_bytes``): an analysis or a search under a
#: clock stops growing there, about 7,800 simulations on 5x5 and 7x7 (each node keeps the game's whole
#: superko history, so a tree's bytes grow with the square of its nodes).
MAX_TREE_BYTES = 512 * 2**20
LCB_WIDTH = 0.98  # 1.96 standard errors of a mean of values in 0..1: 1.96 * sqrt(1/4)


@dataclass(frozen=True)
class Request:
    """An analysis command's arguments: for ``colour`` (None: the side to move), an ``info`` line every
    ``interval`` seconds (None: none while searching), ``min_moves`` / ``max_moves`` moves a line (0 / None:
    no bound), in ``style`` (``FORMATS``)."""

    style: str
    colour: int | None = None
    interval: float | None = DEFAULT_INTERVAL_CS / 100
    min_moves: int = 0
    max_moves: int | None = None


def parse_request(args: list[str], style: str, genmove: bool = False) -> Request:
    """The ``Request`` of ``[colour] [interval] [key value ...]`` (keys ``interval``, ``minmoves``,
    ``maxmoves``; ``ownership false``), the colour required for a ``genmove`` variant. ValueError, one sentence
    that echoes a bounded part of the input, for anything else."""
    words, colour = list(args), None
    if words:
        try:
            colour = parse_color(words[0])
            words.pop(0)
        except ValueError:
            if genmove:
                raise
    elif genmove:
        raise ValueError("a colour is needed (black or white)")
    values = {"interval": DEFAULT_INTERVAL_CS, "minmoves": 0, "maxmoves": None}
    if words and Cli.is_ascii_digits(words[0]):
        values["interval"] = _count("interval", words.pop(0), MAX_INTERVAL_CS)
    if len(words) % 2:
        raise ValueError(f"{shown(words[-1])} has no value (options come as key value pairs)")
    for key, value in zip(words[::2], words[1::2]):
        key = key.lower()
        if key == "ownership" and value.lower() in ("false", "true"):
            if value.lower() == "true":
                raise ValueError("ownership true needs an ownership head, which this network has not")
            continue
        if key not in values:
            raise ValueError(f"unknown option {shown(key)} (interval, minmoves, maxmoves)")
        values[key] = _count(key, value, MAX_INTERVAL_CS if key == "interval" else MAX_MOVES_SHOWN)
    interval = values["interval"] / 100 if values["interval"] else None
    return Request(style, colour, interval, values["minmoves"], values["maxmoves"])


def _count(name: str, text: str, most: int) -> int:
    """``text`` as a count 0..``most`` (``Cli.int_in``: ASCII digits, bounded, no int-digit limit to hit)."""
    try:
        return Cli.int_in(0, most)(text)
    except argparse.ArgumentTypeError as error:  # its sentence names the bound
        raise ValueError(f"{name} {error}") from None


def node_limit(game, state: dict, most: int) -> int:
    """The most nodes (at most ``most``, at least 2) a tree over ``state`` may have within ``MAX_TREE_BYTES``."""
    low, high = 2, max(2, most)
    while low < high:  # the largest n with n * node_bytes(n) within the budget (bytes grow with n)
        mid = (low + high + 1) // 2
        if mid * SearchTree.node_bytes(game, state, mid, 1) <= MAX_TREE_BYTES:
            low = mid
        else:
            high = mid - 1
    return low


def principal_variation(tree: SearchTree, action: int, limit: int) -> list[int]:
    """``action`` and the most visited move at each level below it in the first tree (ties: the lower
    point), at most ``limit`` moves."""
    actions = tree.game.num_actions
    pv, node = [action], tree.children[tree.tree_base[0] * actions + action]
    while len(pv) < limit and node != UNVISITED and tree.expanded[node]:
        visits = tree.stats[node, N_ROW]
        if visits.sum() <= 0:
            break
        best = int(visits.argmax())
        pv.append(best)
        node = tree.children[node * actions + best]
    return pv


def info_line(tree: SearchTree, c_puct: float, request: Request, scores: np.ndarray | None = None) -> str:
    """One ``info`` line of every candidate move of the first tree's root (empty before any visit), in
    ``request.style``; ``scores``: each root move's expected margin (points, the player's), or None."""
    stats = tree.stats[tree.tree_base[0]]
    visits, total = stats[N_ROW], stats[W_ROW]
    legal = np.isfinite(stats[2])
    priors = np.where(legal, stats[2], 0.0) / c_puct
    # Visited moves by visits, ties to the lower point (the move choice's argmax); then, for minmoves,
    # unvisited legal moves by prior.
    shown = [int(a) for a in np.lexsort((np.arange(len(visits)), -visits)) if visits[a] > 0]
    if len(shown) < request.min_moves:
        rest = [int(a) for a in np.lexsort((np.arange(len(priors)), -priors)) if legal[a] and visits[a] == 0]
        shown += rest[: request.min_moves - len(shown)]
    if request.max_moves:
        shown = shown[: request.max_moves]
    parent = (total.sum() / visits.sum() + 1) / 2 if visits.sum() > 0 else 0.5  # for unvisited moves
    size, limit = tree.game.size, 2 * tree.game.num_actions
    parts = []
    for order, action in enumerate(shown):
        n = visits[action]
        winrate = (total[action] / n + 1) / 2 if n > 0 else parent
        lcb = min(1.0, max(0.0, winrate - LCB_WIDTH / np.sqrt(n))) if n > 0 else 0.0
        fields = [("move", format_vertex(action, size)), ("visits", str(int(n)))]
        if request.style == "lz":
            fields += [("winrate", _per10k(winrate)), ("prior", _per10k(priors[action])), ("lcb", _per10k(lcb))]
        else:
            fields.append(("winrate", f"{winrate:.6f}"))
            if scores is not None:
                fields += [("scoreMean", f"{scores[action]:.3f}"), ("scoreLead", f"{scores[action]:.3f}")]
            fields += [("prior", f"{priors[action]:.6f}"), ("lcb", f"{lcb:.6f}")]
        pv = " ".join(format_vertex(a, size) for a in principal_variation(tree, action, limit))
        parts.append("info " + " ".join(f"{k} {v}" for k, v in fields) + f" order {order} pv {pv}")
    return " ".join(parts)


def _per10k(fraction: float) -> str:
    return str(int(round(min(1.0, max(0.0, fraction)) * 10000)))
