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
"""

from __future__ import annotations

import gymnasium as gym

from Cube_Model import (  # noqa: F401 - re-exported: the 3x3's names for the shared facts
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
    gym.register(id=ENV_ID, entry_point="Rubik3x3Env:Rubik3x3Env")
