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

The permutations are derived once, from the 3-D geometry of the stickers, and checked by the
tests against ``shared/vectors/cube2x2.json``.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

FACE_NAMES = "URFDLB"
NUM_FACES = 6
NUM_STICKERS = 24
NUM_ACTIONS = 12
MOVE_NAMES = ("U", "U'", "R", "R'", "F", "F'", "L", "L'", "B", "B'", "D", "D'")
# Actions come in face pairs in the order U R F L B D, unlike the sticker faces (U R F D L B):
# ``ACTION_FACE[a // 2]`` is the sticker face that action ``a`` turns.
ACTION_FACE = (0, 1, 2, 4, 5, 3)
NO_ACTION = -1  # "no previous move" (fresh cube), used by the mask functions


# --------------------------------------------------------------------------- geometry
def _sticker_geometry(face: int, row: int, col: int) -> tuple[np.ndarray, np.ndarray]:
    """Position (cubie corner, coordinates +-1) and outward normal of one sticker.

    x points right, y up, z towards the viewer (out of F); the net layout fixes how rows
    and columns of each face map onto the cube.
    """
    a, b = 2 * col - 1, 1 - 2 * row  # column left->right, row top->bottom
    table = {
        0: ((a, 1, 2 * row - 1), (0, 1, 0)),  # U: row 1 touches F (z=+1)
        1: ((1, b, -a), (1, 0, 0)),  # R: col 0 touches F
        2: ((a, b, 1), (0, 0, 1)),  # F
        3: ((a, -1, 1 - 2 * row), (0, -1, 0)),  # D: row 0 touches F
        4: ((-1, b, a), (-1, 0, 0)),  # L: col 1 touches F
        5: ((-a, b, -1), (0, 0, -1)),  # B: col 0 touches R
    }
    p, n = table[face]
    return np.array(p), np.array(n)


#: Position and normal of every sticker index, and the index of a (position, normal) pair.
_GEOMETRY = [_sticker_geometry(s // 4, (s % 4) // 2, s % 2) for s in range(NUM_STICKERS)]
_STICKER_AT = {(tuple(p), tuple(n)): s for s, (p, n) in enumerate(_GEOMETRY)}


def _quarter_turn_perm(face: int, clockwise: bool) -> np.ndarray:
    """Permutation ``new = old[perm]`` of one quarter turn of ``face``."""
    axis = _sticker_geometry(face, 0, 0)[1]
    # Clockwise seen from outside = -90 degrees about the outward axis (right-hand rule).
    angle = -np.pi / 2 if clockwise else np.pi / 2
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rot = np.rint(np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k).astype(int)
    perm = np.arange(NUM_STICKERS)
    for s, (p, n) in enumerate(_GEOMETRY):
        if p @ axis > 0:  # the sticker sits on the turning layer
            perm[_STICKER_AT[(tuple(rot @ p), tuple(rot @ n))]] = s
    return perm


#: ``MOVE_PERMS[a]`` is the sticker permutation of action ``a``: ``new = old[MOVE_PERMS[a]]``.
MOVE_PERMS = np.stack(
    [_quarter_turn_perm(ACTION_FACE[a // 2], clockwise=(a % 2 == 0)) for a in range(NUM_ACTIONS)]
).astype(np.intp)
MOVE_PERMS.setflags(write=False)

SOLVED_STICKERS = np.repeat(np.arange(NUM_FACES, dtype=np.int8), 4)
SOLVED_STICKERS.setflags(write=False)


# --------------------------------------------------------------------------- action mask
def _build_mask_table() -> np.ndarray:
    """``table[last_action + 1, min(face_count, 2)]`` -> legal mask, the original's two rules."""
    table = np.ones((NUM_ACTIONS + 1, 3, NUM_ACTIONS), dtype=bool)
    for last in range(NUM_ACTIONS):
        for count in range(3):
            table[last + 1, count, last ^ 1] = False  # rule 1: no immediate inverse
            if count >= 2:  # rule 2: the face was turned twice or more in a row
                face = last // 2
                table[last + 1, count, 2 * face : 2 * face + 2] = False
    table.setflags(write=False)
    return table


_MASK_TABLE = _build_mask_table()


def legal_action_mask(last_action, face_count) -> np.ndarray:
    """Legal actions after ``last_action`` (``NO_ACTION``/None: none yet).

    ``face_count`` is how many times in a row the face of ``last_action`` has just been
    turned. Rules (as in the original): (1) the inverse of the last action is illegal;
    (2) after two or more consecutive turns of one face, both actions of that face are
    illegal. Works on scalars (-> ``(12,)``) and on arrays of any shape (-> ``(..., 12)``).
    This is the single definition of the rule; the env and MCTS both call it.
    """
    last = np.asarray(NO_ACTION if last_action is None else last_action, dtype=np.intp)
    count = np.minimum(np.asarray(face_count, dtype=np.intp), 2)
    return _MASK_TABLE[last + 1, count]


def next_face_count(last_action, face_count, action):
    """Consecutive-turn count of ``action``'s face after playing it (vectorised)."""
    same_face = (np.asarray(last_action) >= 0) & (np.asarray(last_action) // 2 == np.asarray(action) // 2)
    return np.where(same_face, np.asarray(face_count) + 1, 1)


# --------------------------------------------------------------------------- single cube API (seed names)
def solved_cube() -> np.ndarray:
    """The solved cube as the original's ``(6, 2, 2)`` int8 array."""
    return SOLVED_STICKERS.reshape(6, 2, 2).copy()


def apply_move_idx(cube: np.ndarray, idx: int) -> np.ndarray:
    """A new cube (same shape and dtype) after action ``idx``; any sticker labels work."""
    cube = np.asarray(cube)
    if not 0 <= int(idx) < NUM_ACTIONS:
        raise ValueError(f"action must be an integer in 0..11, got {idx!r}")
    return cube.reshape(-1)[MOVE_PERMS[int(idx)]].reshape(cube.shape)


def apply_moves(cube: np.ndarray, actions: Iterable[int]) -> np.ndarray:
    """A new cube after a sequence of actions."""
    for a in actions:
        cube = apply_move_idx(cube, a)
    return cube


def is_solved(cube: np.ndarray) -> bool:
    """True when every face is one colour (any whole-cube orientation counts)."""
    return bool(batch_is_solved(np.asarray(cube).reshape(1, NUM_STICKERS))[0])


def encode_onehot(cube: np.ndarray) -> np.ndarray:
    """The ``(144,)`` float32 observation: 24 stickers one-hot over 6 colours."""
    return batch_onehot(np.asarray(cube).reshape(1, NUM_STICKERS))[0]


def scramble(cube: np.ndarray, k: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """``k`` random moves from ``cube``; never the other direction of the face just turned."""
    rng = np.random.default_rng() if rng is None else rng
    moves = scramble_moves(rng, 1, k)[0]
    return apply_moves(np.asarray(cube), moves)


def _make_move_func(a: int):
    def move(cube: np.ndarray) -> np.ndarray:
        return apply_move_idx(cube, a)

    move.__name__ = f"move_{MOVE_NAMES[a].replace(chr(39), '_prime')}"
    return move


#: Seed-compatible table: ``MOVE_FUNCS[idx] == (name, function(cube) -> cube)``.
MOVE_FUNCS = {a: (MOVE_NAMES[a], _make_move_func(a)) for a in range(NUM_ACTIONS)}


# --------------------------------------------------------------------------- batched API, (B, 24) arrays
def batch_apply_moves(cubes: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Apply ``actions[i]`` to ``cubes[i]`` for every row of a ``(B, 24)`` array."""
    return np.take_along_axis(cubes, MOVE_PERMS[actions], axis=1)


def batch_is_solved(cubes: np.ndarray) -> np.ndarray:
    """``(B,)`` bool: every face uniform."""
    faces = cubes.reshape(-1, NUM_FACES, 4)
    return (faces == faces[:, :, :1]).all(axis=(1, 2))


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
    """``(12,)``: for a whole-cube symmetry ``new = old[symmetry]`` (a rotation or the
    mirror), the action that does on the transformed cube what action ``a`` does on the
    original: ``sym(apply(s, a)) == apply(sym(s), renamed[a])``.

    ``sym(apply(s, a)) = s[move_a[symmetry]]`` and ``apply(sym(s), b) = s[symmetry[move_b]]``,
    so ``move_b = inverse[move_a[symmetry]]``: the face turn seen in the transformed frame.
    """
    inverse = np.argsort(symmetry)
    index = {m.tobytes(): a for a, m in enumerate(MOVE_PERMS)}
    return np.array([index[inverse[m[symmetry]].tobytes()] for m in MOVE_PERMS], dtype=np.intp)


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


_EYE6 = np.eye(NUM_FACES, dtype=np.float32)


def batch_onehot(cubes: np.ndarray) -> np.ndarray:
    """``(B, 144)`` float32 observations."""
    return _EYE6[cubes.reshape(-1, NUM_STICKERS)].reshape(-1, NUM_STICKERS * NUM_FACES)


_POW6 = 6 ** np.arange(NUM_STICKERS, dtype=np.int64)


def batch_state_keys(cubes: np.ndarray) -> np.ndarray:
    """``(B,)`` int64: the cube as a base-6 number (exact: 6**24 < 2**63); a cache key."""
    return cubes.reshape(-1, NUM_STICKERS).astype(np.int64) @ _POW6


def scramble_moves(rng: np.random.Generator, batch: int, k: int) -> np.ndarray:
    """``(batch, k)`` random actions; no action is followed by its inverse (seed rule)."""
    moves = np.empty((batch, k), dtype=np.intp)
    if k == 0:
        return moves
    moves[:, 0] = rng.integers(0, NUM_ACTIONS, size=batch)
    for i in range(1, k):
        # Draw among the 11 actions other than the inverse of the previous one.
        r = rng.integers(0, NUM_ACTIONS - 1, size=batch)
        inverse = moves[:, i - 1] ^ 1
        moves[:, i] = r + (r >= inverse)
    return moves


def batch_scramble(rng: np.random.Generator, batch: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` scrambled cubes ``(B, 24)`` int8 of ``k`` moves each, and the moves ``(B, k)``."""
    moves = scramble_moves(rng, batch, k)
    cubes = np.tile(SOLVED_STICKERS, (batch, 1))
    for i in range(k):
        cubes = batch_apply_moves(cubes, moves[:, i])
    return cubes, moves


# --------------------------------------------------------------------------- move strings
def parse_moves(text: str | Sequence[str]) -> list[int]:
    """``"R U R' U'"`` -> action indices; ``R2`` is two turns. Unknown tokens raise ValueError."""
    tokens = text.split() if isinstance(text, str) else list(text)
    actions: list[int] = []
    for tok in tokens:
        if tok in MOVE_NAMES:
            actions.append(MOVE_NAMES.index(tok))
        elif len(tok) == 2 and tok[1] == "2" and tok[0] in MOVE_NAMES:
            actions += [MOVE_NAMES.index(tok[0])] * 2
        else:
            raise ValueError(
                f"unknown move {tok!r}; valid moves are {' '.join(MOVE_NAMES)} (and U2 R2 F2 L2 B2 D2 for half turns)"
            )
    return actions


def format_moves(actions: Iterable[int]) -> str:
    """Action indices -> ``"R U R' U'"``."""
    return " ".join(MOVE_NAMES[int(a)] for a in actions)


def as_ascii(cube: np.ndarray) -> str:
    """The cube net in text, each sticker shown as the face letter of its colour."""
    s = [FACE_NAMES[int(c)] if 0 <= int(c) < 6 else "?" for c in np.asarray(cube).reshape(-1)]

    def row(face: int, r: int) -> str:
        return f"{s[face * 4 + 2 * r]} {s[face * 4 + 2 * r + 1]}"

    pad = " " * 5  # the width of "L L  ": U and D sit above and below F
    lines = [pad + row(0, 0), pad + row(0, 1)]
    for r in range(2):
        lines.append("  ".join(row(f, r) for f in (4, 2, 1, 5)))
    lines += [pad + row(3, 0), pad + row(3, 1)]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the env
class Rubik2x2Env(gym.Env):
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

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self, scramble_len: int = 4, max_steps: int = 100, use_action_mask: bool = True, render_mode: str | None = None
    ):
        super().__init__()
        if scramble_len < 0 or max_steps < 1:
            raise ValueError("scramble_len must be >= 0 and max_steps >= 1")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.scramble_len = scramble_len
        self.max_steps = max_steps
        self.use_action_mask = use_action_mask
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(NUM_STICKERS * NUM_FACES,), dtype=np.float32)
        self.cube = solved_cube()
        self.steps = 0
        self._last_action: int | None = None
        self._last_face_count = 0

    # -- state helpers -------------------------------------------------------
    @property
    def stickers(self) -> np.ndarray:
        """The current cube as 24 stickers (a view)."""
        return self.cube.reshape(NUM_STICKERS)

    @property
    def last_action(self) -> int:
        """The last action played (``NO_ACTION`` = -1 after a reset)."""
        return NO_ACTION if self._last_action is None else self._last_action

    @property
    def face_count(self) -> int:
        """How many times in a row the last action's face has just been turned."""
        return self._last_face_count

    def _legal_action_mask(self) -> np.ndarray:
        if not self.use_action_mask:
            return np.ones(NUM_ACTIONS, dtype=bool)
        return legal_action_mask(self._last_action, self._last_face_count).copy()

    def _info(self) -> dict:
        return {"action_mask": self._legal_action_mask(), "solved": is_solved(self.cube), "steps": self.steps}

    def set_state(self, cube: np.ndarray, last_action: int | None = None, face_count: int = 0) -> None:
        """Put the env in a given cube and move history (used by the GUI and tools)."""
        cube = np.asarray(cube)
        if cube.size != NUM_STICKERS:
            raise ValueError(f"a cube has 24 stickers, got an array of shape {cube.shape}")
        self.cube = cube.reshape(6, 2, 2).astype(np.int8).copy()
        self._last_action = None if last_action is None or last_action < 0 else int(last_action)
        self._last_face_count = face_count if self._last_action is not None else 0
        self.steps = 0

    # -- gymnasium API -------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"cube", "scramble", "scramble_len"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; use 'cube', 'scramble' or 'scramble_len'")
        scramble_text = ""
        if "cube" in options:
            self.set_state(options["cube"])
        else:
            if "scramble" in options:
                moves = options["scramble"]
                moves = parse_moves(moves) if isinstance(moves, str) else [int(m) for m in moves]
            else:
                k = int(options.get("scramble_len", self.scramble_len))
                moves = scramble_moves(self.np_random, 1, k)[0].tolist()
            self.set_state(apply_moves(solved_cube(), moves))
            scramble_text = format_moves(moves)
        info = self._info()
        info["scramble"] = scramble_text
        return encode_onehot(self.cube), info

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"invalid action {action!r}: actions are integers 0..11 ({' '.join(MOVE_NAMES)})")
        a = int(action)
        if not self._legal_action_mask()[a]:
            raise ValueError(
                f"action {a} ({MOVE_NAMES[a]}) is masked after {MOVE_NAMES[self._last_action]} "
                f"(turned {self._last_face_count}x in a row); check info['action_mask']"
            )
        self.cube = apply_move_idx(self.cube, a)
        self._last_face_count = int(
            next_face_count(NO_ACTION if self._last_action is None else self._last_action, self._last_face_count, a)
        )
        self._last_action = a
        self.steps += 1
        info = self._info()
        terminated = info["solved"]
        truncated = self.steps >= self.max_steps
        if self.render_mode == "human":
            print(self.as_ascii(), end="\n\n")
        return encode_onehot(self.cube), 0.0, terminated, truncated, info

    def as_ascii(self) -> str:
        return as_ascii(self.cube)

    def render(self):
        if self.render_mode == "ansi":
            return self.as_ascii()
        if self.render_mode == "human":
            print(self.as_ascii())
        return None

    def get_action_meanings(self) -> list[str]:
        return list(MOVE_NAMES)


ENV_ID = "Rubik2x2-v0"
if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="Rubik2x2Env:Rubik2x2Env")
