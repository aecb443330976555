"""The 2x2x2 cube: exact sticker model, batched helpers, move strings, and a Gymnasium env.

Conventions (shared by every module of the project):

* Faces ``U R F D L B`` are indices 0..5. A cube is 24 stickers, sticker index
  ``face*4 + row*2 + col``; the original's ``(6, 2, 2)`` shape is the same data. Solved: face f
  has colour f everywhere.
* Net layout: U above F (U's row 1 touches F), D below F (D's row 0 touches F),
  L F R B left to right, row 0 on top.
* Actions 0..11 = ``U U' R R' F F' L L' B B' D D'``: face ``a // 2``, inverse ``a ^ 1``.
  A move is a quarter turn, clockwise looking at the face from outside, applied as a
  sticker permutation ``new = old[perm]``.

The permutations are derived once, from the 3-D geometry of the stickers (``Cube_Model``, the
same code that derives the 3x3's), and checked by the tests against
``shared/vectors/cube2x2.json``. The conventions, the mask rule, scrambles, move strings and the
env's logic are ``Cube_Model``'s, shared with ``Rubik3x3Env``; what is the 2x2's alone lives
here: its whole-cube rotations (it has no fixed centres), the mirror image, the 48 symmetries
and the network's canonicalisation tables.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from cube import Cube_Model
from cube.Cube_Model import (  # noqa: F401 - re-exported: the 2x2's names for the shared facts
    ACTION_FACE,
    FACE_NAMES,
    MOVE_NAMES,
    NO_ACTION,
    NUM_ACTIONS,
    NUM_FACES,
    CubeEnv,
    CubeModel,
    format_moves,
    geometry,
    legal_action_mask,
    next_face_count,
    parse_moves,
    scramble_moves,
)

#: The 2x2's permutations and helpers (``Cube_Model.CubeModel``); the names below are the
#: seed's and this project's module-level API.
MODEL = CubeModel(2)
NUM_STICKERS = MODEL.num_stickers  # 24
#: Moves an episode may take before it counts as unsolved (the original's cap; every 2x2 position
#: is within 14 quarter turns).
MAX_MOVES = 40

#: Position and normal of every sticker index, and the index of a (position, normal) pair.
_GEOMETRY, _STICKER_AT = geometry(2)

#: ``MOVE_PERMS[a]`` is the sticker permutation of action ``a``: ``new = old[MOVE_PERMS[a]]``.
MOVE_PERMS = MODEL.move_perms
SOLVED_STICKERS = MODEL.solved

# --------------------------------------------------------------------------- single cube API (seed names)
solved_cube = MODEL.solved_cube  # the solved cube as the original's (6, 2, 2) int8 array
apply_move_idx = MODEL.apply_move_idx
apply_moves = MODEL.apply_moves
is_solved = MODEL.is_solved  # every face one colour (any whole-cube orientation counts)
encode_onehot = MODEL.encode_onehot  # the (144,) float32 observation
scramble = MODEL.scramble
#: Seed-compatible table: ``MOVE_FUNCS[idx] == (name, function(cube) -> cube)``.
MOVE_FUNCS = MODEL.move_funcs()

# --------------------------------------------------------------------------- batched API, (B, 24) arrays
batch_apply_moves = MODEL.batch_apply_moves
batch_is_solved = MODEL.batch_is_solved
batch_onehot = MODEL.batch_onehot  # (B, 144)
batch_state_keys = MODEL.batch_state_keys  # (B,) int64: the cube as a base-6 number (6**24 < 2**63)
batch_scramble = MODEL.batch_scramble
as_ascii = MODEL.as_ascii


def _build_rotations() -> np.ndarray:
    """The 24 whole-cube rotations as sticker permutations (``new = old[perm]``).

    A 2x2 has no middle layer, so turning two opposite faces the same way round the same
    axis (R with L', U with D', F with B') turns the whole cube; x and y generate all 24.
    """
    identity = np.arange(NUM_STICKERS, dtype=np.intp)
    x = identity[MOVE_PERMS[2]][MOVE_PERMS[7]]  # R then L'
    y = identity[MOVE_PERMS[0]][MOVE_PERMS[11]]  # U then D'
    found, frontier = {identity.tobytes(): identity}, [identity]
    while frontier:
        frontier = [p[g] for p in frontier for g in (x, y)]
        frontier = [found.setdefault(p.tobytes(), p) for p in frontier if p.tobytes() not in found]
    perms = np.stack(sorted(found.values(), key=lambda p: p.tolist()))
    perms.setflags(write=False)
    return perms


#: ``ROTATION_PERMS[r]``: the sticker permutation of whole-cube rotation ``r`` (24 of them,
#: the identity first). A rotated cube is the same position: solved stays solved, every
#: distance stays the same; only the network sees different input.
ROTATION_PERMS = _build_rotations()


def batch_rotate(cubes: np.ndarray, rotations: np.ndarray) -> np.ndarray:
    """Turn ``cubes[i]`` as a whole by rotation ``rotations[i]`` (an index into ``ROTATION_PERMS``)."""
    return np.take_along_axis(cubes, ROTATION_PERMS[rotations], axis=1)


def _renamed_moves(symmetry: np.ndarray) -> np.ndarray:
    """``Cube_Model.renamed_moves`` of the 2x2's moves: the action that does on the cube transformed by
    ``symmetry`` (a rotation or the mirror) what action ``a`` does on the original."""
    return Cube_Model.renamed_moves(MOVE_PERMS, symmetry)


def _build_canonical_tables() -> tuple[np.ndarray, np.ndarray]:
    """Where rotation ``r`` reads the down-left-back corner from, and how it renames moves.

    ``slot_reads[r]`` (3 sticker indices): the stickers that land on the D, L and B
    stickers of the down-left-back corner when rotation ``r`` is applied.
    ``move_map[r, a]``: the action on the rotated cube that does what action ``a`` does
    on the unrotated one, i.e. ``rotate(apply(s, a), r) == apply(rotate(s, r), move_map[r, a])``.
    """
    slot = [s for s, (p, _) in enumerate(_GEOMETRY) if tuple(p) == (-1, -1, -1)]
    slot = sorted(slot, key=lambda s: SOLVED_STICKERS[s])  # the D, L, B stickers, in that colour order
    slot_reads = ROTATION_PERMS[:, slot]
    move_map = np.stack([_renamed_moves(rot) for rot in ROTATION_PERMS])
    slot_reads.setflags(write=False)
    move_map.setflags(write=False)
    return slot_reads, move_map


#: The canonical orientation of a cube is the one rotation (of 24) that brings the cubie
#: coloured D, L, B (the corner that never moves in the solved cube's D-L-B slot) into
#: that slot with its D colour down; every position has exactly one. ``CANONICAL_SLOT_READS``
#: and ``ROTATION_MOVE_MAP`` are the tables ``canonical_rotation`` and the network use.
CANONICAL_SLOT_READS, ROTATION_MOVE_MAP = _build_canonical_tables()
CANONICAL_SLOT_COLOURS = SOLVED_STICKERS[CANONICAL_SLOT_READS[0]]


def _build_mirror() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The left-right mirror image of a cube as a sticker permutation, a colour renaming
    and a renaming of moves.

    Reflecting the cube in the plane between L and R swaps those faces; every corner then
    shows its colours in mirrored order, so the R and L colours are swapped as well to make
    it a real cube again. The solved cube is its own image, and a move sequence mirrored
    (each turn of R becomes L' and so on) solves the image, so distances are unchanged.
    """
    flip = np.array([-1, 1, 1])
    perm = np.array([_STICKER_AT[(tuple(flip * p), tuple(flip * n))] for p, n in _GEOMETRY], dtype=np.intp)
    colours = np.arange(NUM_FACES, dtype=np.int8)
    colours[[FACE_NAMES.index("R"), FACE_NAMES.index("L")]] = colours[[FACE_NAMES.index("L"), FACE_NAMES.index("R")]]
    move_map = _renamed_moves(perm)  # the colour renaming commutes with every move
    for table in (perm, colours, move_map):
        table.setflags(write=False)
    return perm, colours, move_map


#: ``batch_mirror`` uses these: ``mirror(apply(s, a)) == apply(mirror(s), MIRROR_MOVE_MAP[a])``.
MIRROR_PERM, MIRROR_COLOURS, MIRROR_MOVE_MAP = _build_mirror()


def batch_mirror(cubes: np.ndarray) -> np.ndarray:
    """The left-right mirror image of every cube: the same distance from solved, but an
    input that a network canonicalising only rotations still sees as new."""
    return MIRROR_COLOURS[np.asarray(cubes)[..., MIRROR_PERM]]


def _build_symmetries() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 48 symmetries of the cube that keep every distance: ``T_k(s) = colours[k][s[perms[k]]]``
    and ``T_k(apply(s, a)) == apply(T_k(s), move_map[k, a])``.

    Symmetries 0..23 only rename colours, as the whole-cube rotation ``k`` renames them
    (what was face f's colour becomes the colour the rotation brings to face f). Moves
    permute stickers and a renaming acts on colours, so the two commute: the renamed cube
    is the solved cube turned as a whole, scrambled by the same moves, and as far from
    solved (move names unchanged). Symmetries 24..47 are the same renamings of the mirror
    image. Together with the 24 orientations they map a position to every position
    that is the same up to a symmetry of the cube: about 48 times fewer positions.
    """
    identity = np.arange(NUM_STICKERS, dtype=np.intp)
    face_stickers = [int(np.flatnonzero(SOLVED_STICKERS == f)[0]) for f in range(NUM_FACES)]
    renamings = np.stack([SOLVED_STICKERS[rot][face_stickers] for rot in ROTATION_PERMS]).astype(np.int8)
    perms = np.stack([identity] * len(renamings) + [MIRROR_PERM] * len(renamings))
    colours = np.concatenate([renamings, renamings[:, MIRROR_COLOURS]])
    move_map = np.stack([np.arange(NUM_ACTIONS)] * len(renamings) + [MIRROR_MOVE_MAP] * len(renamings)).astype(np.intp)
    for table in (perms, colours, move_map):
        table.setflags(write=False)
    return perms, colours, move_map


#: ``SYMMETRY_PERMS[k]``, ``SYMMETRY_COLOURS[k]``, ``SYMMETRY_MOVE_MAP[k]``: symmetry ``k`` of
#: 48 (``batch_symmetry``); symmetry 0 is the identity and 24 the mirror image.
SYMMETRY_PERMS, SYMMETRY_COLOURS, SYMMETRY_MOVE_MAP = _build_symmetries()


#: The network's canonical-orientation tables (``PolicyValueNet._canonicalise``).
ROTATION_CANONICAL_TABLES = dict(
    slot_reads=CANONICAL_SLOT_READS,
    slot_colours=CANONICAL_SLOT_COLOURS,
    rotations=ROTATION_PERMS,
    move_map=ROTATION_MOVE_MAP,
)


def _build_symmetry_canonical_tables() -> dict[str, np.ndarray]:
    """The lookup tables of ``PolicyValueNet._canonicalise_symmetries`` (its buffers, less the
    leading underscore): each symmetric image's canonical rotation from where its D-L-B cubie
    sits, and the sticker order its images are compared in."""
    first = CANONICAL_SLOT_READS[:, 0]  # rotation r is canonical when sticker first[r] and its two mates show D, L, B
    corner_reads = np.empty((NUM_STICKERS, 3), dtype=np.int64)
    corner_reads[first] = CANONICAL_SLOT_READS
    # Image k shows at sticker p the colour SYMMETRY_COLOURS[k] of input sticker SYMMETRY_PERMS[k, p]: a plain
    # image (k < 24) reads corners as the input does, a mirrored one reads them through MIRROR_PERM.
    kinds = np.array([0] * 24 + [1] * 24)
    plain, mirrored = SYMMETRY_PERMS[0], SYMMETRY_PERMS[24]
    assert (SYMMETRY_PERMS == np.where(kinds[:, None] == 0, plain, mirrored)).all()
    undo = np.argsort(SYMMETRY_COLOURS, axis=1)  # the input colour that image k renames to each colour
    home = (undo[:, CANONICAL_SLOT_COLOURS] * (36, 6, 1)).sum(axis=1) + 216 * kinds
    # Key order: sticker 23 most significant; the D-L-B stickers are the same in every canonical image.
    order = [p for p in range(NUM_STICKERS - 1, -1, -1) if p not in set(CANONICAL_SLOT_READS[0])]
    lead, rest = np.array(order[:6]), np.array(order[6:])
    image_reads = np.stack(
        [SYMMETRY_PERMS[k][ROTATION_PERMS[r]] for k in range(len(SYMMETRY_PERMS)) for r in range(len(ROTATION_PERMS))]
    )
    return dict(
        corner_reads=np.stack([plain[corner_reads], mirrored[corner_reads]]),
        code_weights=np.array([36, 6, 1]),
        code_offsets=np.array([[0], [216]]),
        sticker_ids=np.tile(np.arange(NUM_STICKERS), 2),
        home_code=home,
        rotation_of_first=np.argsort(first),
        image_reads=image_reads,
        sym_colours_flat=SYMMETRY_COLOURS.reshape(-1),
        symmetry_ids=np.arange(len(SYMMETRY_PERMS)),
        key_lead=lead,
        key_rest=rest,
        all_stickers=np.arange(NUM_STICKERS),
        lead_weights=6 ** np.arange(len(lead) - 1, -1, -1),
        rest_weights=6 ** np.arange(len(rest) - 1, -1, -1),
        sym_move_map=SYMMETRY_MOVE_MAP,
    )


#: The network's tables for reducing the 48 symmetries (``PolicyValueNet._canonicalise_symmetries``).
SYMMETRY_CANONICAL_TABLES = _build_symmetry_canonical_tables()


def batch_symmetry(cubes: np.ndarray, symmetries: np.ndarray) -> np.ndarray:
    """``cubes[i]`` under symmetry ``symmetries[i]``: a cube exactly as far from solved."""
    symmetries = np.asarray(symmetries)
    moved = np.take_along_axis(np.asarray(cubes), SYMMETRY_PERMS[symmetries], axis=1)
    return np.take_along_axis(SYMMETRY_COLOURS[symmetries], moved.astype(np.intp), axis=1)


def canonical_rotation(cubes: np.ndarray) -> np.ndarray:
    """``(B,)`` index into ``ROTATION_PERMS`` of each cube's canonical orientation (0 for a
    sticker array that is not a real cube and has no such orientation)."""
    cubes = np.asarray(cubes).reshape(-1, NUM_STICKERS)
    return (cubes[:, CANONICAL_SLOT_READS] == CANONICAL_SLOT_COLOURS).all(axis=2).argmax(axis=1)


def canonical_orientation(cubes: np.ndarray) -> np.ndarray:
    """``(B, 24)``: each cube turned as a whole into its canonical orientation, the same
    stickers for every orientation of one position."""
    cubes = np.asarray(cubes).reshape(-1, NUM_STICKERS)
    return batch_rotate(cubes, canonical_rotation(cubes))


# --------------------------------------------------------------------------- the env
class Rubik2x2Env(CubeEnv):
    """The 2x2x2 Rubik's cube as a Gymnasium environment, with action masking.

    ## Description
    A cube is scrambled with ``scramble_len`` random quarter turns; the agent turns faces
    until every face is one colour (any whole-cube orientation counts as solved).

    ## Action space
    ``Discrete(12)``: ``0..11 = U U' R R' F F' L L' B B' D D'`` (``get_action_meanings()``).

    ## Observation space
    ``Box(0, 1, (144,), float32)``: the 24 stickers (index ``face*4 + row*2 + col``,
    faces ``U R F D L B``) one-hot over the 6 colours, flattened.

    ## Rewards
    Always ``0.0``: AlphaZero training uses the terminal value of each episode instead.

    ## Starting state
    Solved, then ``scramble_len`` random moves drawn from ``self.np_random`` (no move is
    followed by its inverse). ``reset(options=...)`` may instead give ``{"cube": array}``
    (24 stickers or ``(6, 2, 2)``), ``{"scramble": "R U R' U'"}`` (a move string or a list
    of action indices), or ``{"scramble_len": k}`` for this episode only.

    ## Episode end
    ``terminated`` when solved; ``truncated`` when ``max_steps`` moves were made.

    ## Info
    ``action_mask`` (bool ``(12,)``): the legal actions. With ``use_action_mask=True``,
    after action ``a`` its inverse ``a ^ 1`` is illegal, and after two or more turns in a
    row of one face both actions of that face are illegal; otherwise all are legal.
    ``solved`` (bool), ``steps`` (int) and ``scramble`` (the scramble's move string; on
    ``reset`` only).

    ## Arguments
    ``Rubik2x2Env(scramble_len=4, max_steps=100, use_action_mask=True, render_mode=None)``;
    ``render_mode`` "ansi" returns the net as text from ``render()``, "human" prints it.

    Stepping an action outside 0..11, or a masked action while masking is on, raises
    ``ValueError``.
    """

    model = MODEL


ENV_ID = "Rubik2x2-v0"
if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="Rubik2x2Env:Rubik2x2Env")
