"""The 3x3x3 cube: exact sticker model, batched helpers, move strings, and a Gymnasium env.

The 2x2's conventions, one size up (``Cube_Model`` holds both):

* Faces ``U R F D L B`` are indices 0..5. A cube is 54 stickers, sticker index
  ``face*9 + row*3 + col``; ``(6, 3, 3)`` is the same data. Solved: face f has colour f everywhere.
* Net layout: U above F (U's row 2 touches F), D below F (D's row 0 touches F),
  L F R B left to right, row 0 on top.
* Actions 0..11 = ``U U' R R' F F' L L' B B' D D'`` (outer-layer quarter turns, clockwise
  looking at the face), the same mask rule, scramble rule and move strings (``R2`` = two turns).

Unlike the 2x2, the 3x3 has centres and no move turns them: the six centre stickers say which
colour belongs on which face, so the whole-cube orientation is fixed and there is exactly one
solved state (on the 2x2 any of 24 orientations counts as solved). For the same reason a state
key needs only the 48 other stickers, two int64s (``CubeModel.batch_state_keys``).

The permutations are derived from the sticker geometry by the same code as the 2x2's, and
checked by the tests against ``shared/vectors/cube3x3.json``.

Uniformly random states (``random_states``, ``evaluate.py --uniform``): a 3x3 position is its 8
corner cubies and 12 edge cubies, each in some slot and some orientation, and a description is
a reachable position exactly when the corner and edge permutations have the same parity, the
corner twists sum to 0 mod 3 and the edge flips to 0 mod 2 (orientations read against the U/D
sticker of a slot, or for the four middle-layer edges its F/B sticker). Drawing each part
uniformly under those three rules draws every one of the 43,252,003,274,489,856,000 positions
with the same probability: no random walk, however long, does that exactly.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from cube import Cube_Model
from cube.Cube_Model import (  # noqa: F401 - re-exported: the 3x3's names for the shared facts
    ACTION_FACE,
    FACE_NAMES,
    MOVE_NAMES,
    NO_ACTION,
    NUM_ACTIONS,
    NUM_FACES,
    CubeEnv,
    CubeModel,
    format_moves,
    legal_action_mask,
    next_face_count,
    parse_moves,
    scramble_moves,
)

MODEL = CubeModel(3)
NUM_STICKERS = MODEL.num_stickers  # 54
CENTRES = tuple(f * 9 + 4 for f in range(NUM_FACES))  # the stickers no move moves

#: ``MOVE_PERMS[a]`` is the sticker permutation of action ``a``: ``new = old[MOVE_PERMS[a]]``.
MOVE_PERMS = MODEL.move_perms
SOLVED_STICKERS = MODEL.solved


# --------------------------------------------------------------------------- cubies
def _cubie_slots() -> tuple[np.ndarray, np.ndarray]:
    """``(8, 3)`` corner and ``(12, 2)`` edge sticker indices, one row per cubie slot, read from
    the sticker geometry. Position 0 of a slot is its reference sticker (on U or D; for a
    middle-layer edge on F or B); a corner's other two follow in one fixed turning sense, the
    same for every slot, so a twist of a cubie moves its colours round the positions."""
    stickers, _ = Cube_Model.geometry(3)
    normals = [n for _, n in stickers]
    corners, edges = [], []
    for group in Cube_Model.cubie_stickers(3):
        if len(group) == 3:
            ref = next(s for s in group if normals[s][1] != 0)
            a, b = (s for s in group if s != ref)
            if np.cross(normals[ref], normals[a]) @ normals[b] < 0:
                a, b = b, a
            corners.append((ref, a, b))
        elif len(group) == 2:
            ref = next((s for s in group if normals[s][1] != 0), None)
            ref = ref if ref is not None else next(s for s in group if normals[s][2] != 0)
            edges.append((ref, next(s for s in group if s != ref)))
    corner_slots, edge_slots = np.array(corners, dtype=np.intp), np.array(edges, dtype=np.intp)
    corner_slots.setflags(write=False)
    edge_slots.setflags(write=False)
    return corner_slots, edge_slots


#: ``CORNER_SLOTS[s]``: the 3 stickers of corner slot s, reference first; ``EDGE_SLOTS[s]``: 2.
CORNER_SLOTS, EDGE_SLOTS = _cubie_slots()
#: The colours of cubie c in its slot order when solved (cubie c lives in slot c).
CORNER_COLOURS, EDGE_COLOURS = MODEL.solved[CORNER_SLOTS], MODEL.solved[EDGE_SLOTS]


def permutation_parity(perms: np.ndarray) -> np.ndarray:
    """``(B,)`` 0 or 1: the parity of each row of ``perms`` (B, k), by counting inversions."""
    perms = np.asarray(perms)
    k = perms.shape[1]
    later = np.triu(np.ones((k, k), dtype=bool), 1)
    return ((perms[:, :, None] > perms[:, None, :]) & later).sum(axis=(1, 2)) % 2


def cubies_to_stickers(cp: np.ndarray, co: np.ndarray, ep: np.ndarray, eo: np.ndarray) -> np.ndarray:
    """``(B, 54)`` int8 stickers of ``B`` cubie descriptions: slot s holds corner ``cp[:, s]``
    turned ``co[:, s]`` (0..2: the position of its reference colour) and edge ``ep[:, s]``
    flipped ``eo[:, s]`` (0 or 1). Any description gives stickers; only those with equal
    parities, twists summing to 0 mod 3 and flips to 0 mod 2 are reachable positions."""
    cp, co, ep, eo = (np.asarray(a, dtype=np.intp) for a in (cp, co, ep, eo))
    cubes = np.tile(MODEL.solved, (len(cp), 1))
    for k in range(3):
        np.put_along_axis(cubes, CORNER_SLOTS[np.arange(8), (k + co) % 3], CORNER_COLOURS[cp, k], axis=1)
    for k in range(2):
        np.put_along_axis(cubes, EDGE_SLOTS[np.arange(12), (k + eo) % 2], EDGE_COLOURS[ep, k], axis=1)
    return cubes


def stickers_to_cubies(cubes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The inverse of ``cubies_to_stickers`` for stickers that show real cubies: ``cp, co, ep, eo``.
    Raises ValueError when a slot shows colours that are no cubie's, turned as a cubie turns."""
    cubes = np.asarray(cubes).reshape(-1, NUM_STICKERS)
    parts = []
    for slots, colours, turns in ((CORNER_SLOTS, CORNER_COLOURS, 3), (EDGE_SLOTS, EDGE_COLOURS, 2)):
        seen = cubes[:, slots]  # (B, slots, turns): the colours at each slot position
        # A cubie turned o shows colour k at position (k + o) % turns: try every cubie and turn.
        shifted = np.stack([colours[:, (np.arange(turns) - o) % turns] for o in range(turns)], axis=1)
        match = (seen[:, :, None, None, :] == shifted[None, None]).all(axis=-1)  # (B, slots, cubies, turns)
        if not (match.reshape(*match.shape[:2], -1).sum(axis=-1) == 1).all():
            raise ValueError("the stickers show a cubie that no 3x3 has")
        flat = match.reshape(*match.shape[:2], -1).argmax(axis=-1)
        parts += [flat // turns, flat % turns]
    return tuple(parts)


def inverse_states(cubes: np.ndarray) -> np.ndarray:
    """``(B, 54)`` int8: the inverse of each position, the one that the cube's scramble undoes: if the
    moves ``m_1 .. m_k`` make ``cube`` from the solved cube, the inverses of ``m_k .. m_1`` make its
    inverse (so a solution of the inverse, reversed with every move inverted, solves the cube, equally
    long). Cubie ``c`` in slot ``s`` turned ``o`` becomes cubie ``s`` in slot ``c`` turned ``-o``."""
    cp, co, ep, eo = stickers_to_cubies(cubes)
    rows = np.arange(len(cp))[:, None]
    parts = []
    for perm, turn, turns in ((cp, co, 3), (ep, eo, 2)):
        inv_perm, inv_turn = np.empty_like(perm), np.empty_like(turn)
        inv_perm[rows, perm] = np.arange(perm.shape[1])
        inv_turn[rows, perm] = -turn % turns
        parts += [inv_perm, inv_turn]
    return cubies_to_stickers(*parts)


def random_states(rng: np.random.Generator, batch: int) -> np.ndarray:
    """``(batch, 54)`` int8: uniformly random 3x3 positions (see the module docstring): the
    permutations uniform, the edges' parity then made the corners' by swapping the first two
    edges (a bijection between odd and even), the orientations uniform with the last cubie's
    set by the sum rule."""
    cp = np.argsort(rng.random((batch, 8)), axis=1)
    ep = np.argsort(rng.random((batch, 12)), axis=1)
    odd = permutation_parity(cp) != permutation_parity(ep)
    ep[odd, 0], ep[odd, 1] = ep[odd, 1], ep[odd, 0].copy()
    co = rng.integers(0, 3, size=(batch, 8))
    co[:, -1] = -co[:, :-1].sum(axis=1) % 3
    eo = rng.integers(0, 2, size=(batch, 12))
    eo[:, -1] = eo[:, :-1].sum(axis=1) % 2
    return cubies_to_stickers(cp, co, ep, eo)


# --------------------------------------------------------------------------- single cube API (the 2x2's names)
solved_cube = MODEL.solved_cube  # (6, 3, 3) int8
apply_move_idx = MODEL.apply_move_idx
apply_moves = MODEL.apply_moves
is_solved = MODEL.is_solved
encode_onehot = MODEL.encode_onehot  # the (324,) float32 observation
scramble = MODEL.scramble
MOVE_FUNCS = MODEL.move_funcs()

# --------------------------------------------------------------------------- batched API, (B, 54) arrays
batch_apply_moves = MODEL.batch_apply_moves
batch_is_solved = MODEL.batch_is_solved
batch_onehot = MODEL.batch_onehot  # (B, 324)
batch_state_keys = MODEL.batch_state_keys  # (B,) exact keys, two int64 fields (MODEL.key_dtype)
batch_scramble = MODEL.batch_scramble
as_ascii = MODEL.as_ascii


class Rubik3x3Env(CubeEnv):
    """The 3x3x3 Rubik's cube as a Gymnasium environment, with action masking.

    ## Description
    A cube is scrambled with ``scramble_len`` random quarter turns; the agent turns outer
    faces until every face is one colour. The centres never move, so there is one solved state.

    ## Action space
    ``Discrete(12)``: ``0..11 = U U' R R' F F' L L' B B' D D'`` (``get_action_meanings()``).

    ## Observation space
    ``Box(0, 1, (324,), float32)``: the 54 stickers (index ``face*9 + row*3 + col``,
    faces ``U R F D L B``) one-hot over the 6 colours, flattened (centres included).

    ## Rewards
    Always ``0.0``, as the 2x2's: training uses the terminal value of each episode instead.

    ## Starting state
    Solved, then ``scramble_len`` random moves drawn from ``self.np_random`` (no move is
    followed by its inverse). ``reset(options=...)`` may instead give ``{"cube": array}``
    (54 stickers or ``(6, 3, 3)``), ``{"scramble": "R U R' U'"}`` (a move string or a list
    of action indices), or ``{"scramble_len": k}`` for this episode only.

    ## Episode end
    ``terminated`` when solved; ``truncated`` when ``max_steps`` moves were made.

    ## Info
    ``action_mask`` (bool ``(12,)``): the legal actions, by the 2x2's rule (``legal_action_mask``):
    after action ``a`` its inverse ``a ^ 1`` is illegal, and after two or more turns in a row
    of one face both actions of that face are illegal. ``solved`` (bool), ``steps`` (int) and
    ``scramble`` (the scramble's move string; on ``reset`` only).

    ## Arguments
    ``Rubik3x3Env(scramble_len=4, max_steps=100, use_action_mask=True, render_mode=None)``;
    ``render_mode`` "ansi" returns the net as text from ``render()``, "human" prints it.

    Stepping an action outside 0..11, or a masked action while masking is on, raises
    ``ValueError``.
    """

    model = MODEL


ENV_ID = "Rubik3x3-v0"
if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="cube.Rubik3x3Env:Rubik3x3Env")
