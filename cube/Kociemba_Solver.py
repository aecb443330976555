"""The 3x3's reference solver: Kociemba's two-phase algorithm (the ``kociemba`` package, C).

Two-phase search finds a solution of at most about 24 half-turn moves in tens of milliseconds,
not always the shortest: its length is an upper bound on the true distance, what the 3x3's
evaluation measures solutions against (there is no exact table as for the 2x2).

Conversions, both checked by the tests:

* ``to_facelets``: our sticker array -> kociemba's 54-letter facelet string. Kociemba lists
  the faces in the order U R F D L B, each face's 9 facelets row by row as seen from outside
  on the usual net (U above F, D below F, L F R B left to right): the same order as our sticker
  index ``face*9 + row*3 + col``. So sticker s is facelet s; only colours become letters, each
  colour named by the face whose centre shows it.
* ``to_actions``: kociemba's answer (``R``, ``R'``, ``R2``; half-turn metric) -> our quarter
  turns, ``R2`` as ``R R``. Lengths are reported in quarter turns, as everything else here.
"""

from __future__ import annotations

import numpy as np

from cube.Cube_Model import FACE_NAMES, parse_moves
from cube.Rubik3x3Env import CENTRES, MODEL, NUM_STICKERS


def to_facelets(stickers: np.ndarray) -> str:
    """Kociemba's facelet string of a 3x3 (54 stickers, any 6 colour labels as long as each
    centre shows a different one). Raises ValueError for an array that is not 54 stickers."""
    stickers = np.asarray(stickers).reshape(-1)
    if stickers.size != NUM_STICKERS:
        raise ValueError(f"a 3x3 has {NUM_STICKERS} stickers, got {stickers.size}")
    letter = {int(stickers[c]): FACE_NAMES[f] for f, c in enumerate(CENTRES)}
    if len(letter) != len(CENTRES):
        raise ValueError("the six centres of a 3x3 show six different colours")
    try:
        return "".join(letter[int(c)] for c in stickers)
    except KeyError as exc:
        raise ValueError(f"colour {exc.args[0]} is on no centre") from None


def to_actions(solution: str) -> list[int]:
    """Kociemba's move string (half turns allowed) as our quarter-turn actions."""
    return parse_moves(solution)


def solve(stickers: np.ndarray) -> list[int]:
    """A two-phase solution of one 3x3 as our actions (quarter turns); ``[]`` when solved.

    The solved cube is answered here: kociemba returns a long identity sequence for it. The
    answer is replayed before it is returned, so a conversion error can never pass silently.
    Raises ValueError for a sticker array that is no reachable 3x3 position.
    """
    import kociemba  # here, not at the top: an optional dependency that only the 3x3 reference needs

    stickers = np.asarray(stickers).reshape(NUM_STICKERS)
    if MODEL.is_solved(stickers):
        return []
    try:
        text = kociemba.solve(to_facelets(stickers))
    except ValueError:
        raise ValueError("kociemba found no solution: the stickers are not a reachable 3x3 position") from None
    actions = to_actions(text)
    if not MODEL.is_solved(MODEL.apply_moves(stickers, actions)):
        raise RuntimeError(f"kociemba's solution {text!r} does not solve the cube it was given")
    return actions


def solution_lengths(cubes: np.ndarray) -> np.ndarray:
    """``(B,)`` int64: the quarter-turn length of kociemba's solution of each cube (about 40 ms
    each for a random state on this CPU)."""
    cubes = np.asarray(cubes).reshape(-1, NUM_STICKERS)
    return np.array([len(solve(c)) for c in cubes], dtype=np.int64)
