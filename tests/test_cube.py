"""The cube model against the test vectors: moves, scrambles, batched helpers, move strings."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from conftest import VECTOR_PATHS, VECTOR_PATHS_3X3
from Rubik2x2Env import (
    MOVE_FUNCS,
    MOVE_NAMES,
    MOVE_PERMS,
    NO_ACTION,
    NUM_ACTIONS,
    SOLVED_STICKERS,
    apply_move_idx,
    apply_moves,
    batch_apply_moves,
    batch_is_solved,
    batch_onehot,
    batch_scramble,
    batch_state_keys,
    encode_onehot,
    format_moves,
    is_solved,
    legal_action_mask,
    next_face_count,
    parse_moves,
    scramble,
    scramble_moves,
    solved_cube,
)

IDENTITY = np.arange(24)
LABELS = np.arange(24, dtype=np.int16).reshape(6, 2, 2)  # every sticker its own label


def perm_of(actions) -> np.ndarray:
    """The sticker permutation of a move sequence (``new = old[perm]``), via labelled stickers."""
    return apply_moves(IDENTITY, actions)


def random_cubes(n: int, k: int = 10, seed: int = 0) -> np.ndarray:
    return batch_scramble(np.random.default_rng(seed), n, k)[0]


# --------------------------------------------------------------------------- against the vectors
@pytest.mark.parametrize("paths", [VECTOR_PATHS, VECTOR_PATHS_3X3], ids=["2x2", "3x3"])
def test_vector_copies_agree(paths):
    """tests/vectors is a copy of ../shared/vectors for checkouts without ../shared: the copy is always there,
    and where ../shared is beside the checkout the two are equal."""
    shared, copy = paths
    assert copy.is_file(), f"{copy} is missing"
    if not shared.parent.is_dir():
        pytest.skip("no ../shared/vectors beside this checkout")
    assert json.loads(shared.read_text()) == json.loads(copy.read_text())


def test_move_names_and_solved_match_vectors(vectors):
    assert list(MOVE_NAMES) == vectors["move_names"]
    assert solved_cube().reshape(-1).tolist() == vectors["solved"]
    assert solved_cube().shape == (6, 2, 2) and solved_cube().dtype == np.int8


@pytest.mark.parametrize("action", range(NUM_ACTIONS))
def test_move_equals_vector_permutation(vectors, action):
    perm = vectors["move_perms"][MOVE_NAMES[action]]
    assert MOVE_PERMS[action].tolist() == perm
    # The function, not only the table: labelled stickers give the permutation itself.
    assert apply_move_idx(IDENTITY, action).tolist() == perm
    assert apply_move_idx(LABELS, action).reshape(-1).tolist() == perm
    # And colours follow new = old[perm].
    assert apply_move_idx(solved_cube(), action).reshape(-1).tolist() == np.array(vectors["solved"])[perm].tolist()


def test_example_scrambles_give_listed_stickers(vectors):
    examples = vectors["examples"]
    assert len(examples) >= 20
    for ex in examples:
        cube = apply_moves(solved_cube(), parse_moves(ex["scramble"]))
        assert cube.reshape(-1).tolist() == ex["stickers"], ex["scramble"]
        assert is_solved(cube) == (ex["optimal_qtm_length"] == 0)


def test_example_scrambles_batched(vectors):
    examples = vectors["examples"]
    longest = max(len(parse_moves(ex["scramble"])) for ex in examples)
    cubes = np.tile(SOLVED_STICKERS, (len(examples), 1))
    for i in range(longest):
        actions = np.array([(parse_moves(ex["scramble"]) + [-1] * longest)[i] for ex in examples])
        moved = batch_apply_moves(cubes, np.maximum(actions, 0))
        cubes = np.where(actions[:, None] >= 0, moved, cubes)
    np.testing.assert_array_equal(cubes, np.array([ex["stickers"] for ex in examples]))


# --------------------------------------------------------------------------- group structure
@pytest.mark.parametrize("action", range(NUM_ACTIONS))
def test_each_move_has_order_four(action):
    for n in (1, 2, 3):
        assert not np.array_equal(perm_of([action] * n), IDENTITY)
    np.testing.assert_array_equal(perm_of([action] * 4), IDENTITY)


@pytest.mark.parametrize("action", range(NUM_ACTIONS))
def test_move_then_inverse_is_identity(action):
    inverse = action ^ 1
    assert (
        MOVE_NAMES[inverse].rstrip("'") == MOVE_NAMES[action].rstrip("'") and MOVE_NAMES[inverse] != MOVE_NAMES[action]
    )
    np.testing.assert_array_equal(perm_of([action, inverse]), IDENTITY)
    np.testing.assert_array_equal(perm_of([inverse, action]), IDENTITY)
    np.testing.assert_array_equal(perm_of([action] * 3), perm_of([inverse]))


def test_quarter_turn_moves_twelve_stickers():
    for a in range(NUM_ACTIONS):
        assert (MOVE_PERMS[a] != IDENTITY).sum() == 12  # 4 on the face, 2 on each of 4 sides


def test_opposite_faces_commute_and_adjacent_do_not():
    U, R, F, L, B, D = (MOVE_NAMES.index(m) for m in "URFLBD")
    for a, b in ((U, D), (R, L), (F, B)):
        np.testing.assert_array_equal(perm_of([a, b]), perm_of([b, a]))
    for a, b in ((U, R), (R, F), (F, U), (D, B)):
        assert not np.array_equal(perm_of([a, b]), perm_of([b, a]))


def test_move_tables_are_read_only():
    with pytest.raises(ValueError):
        MOVE_PERMS[0, 0] = 1
    with pytest.raises(ValueError):
        SOLVED_STICKERS[0] = 1


# --------------------------------------------------------------------------- single-cube API
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64, np.uint8])
def test_apply_move_idx_keeps_shape_and_dtype(dtype):
    cube = solved_cube().astype(dtype)
    for a in range(NUM_ACTIONS):
        out = apply_move_idx(cube, a)
        assert out.shape == (6, 2, 2) and out.dtype == dtype
    flat = apply_move_idx(SOLVED_STICKERS.astype(dtype), 5)
    assert flat.shape == (24,) and flat.dtype == dtype


def test_apply_move_idx_returns_a_new_cube():
    cube = solved_cube()
    before = cube.copy()
    out = apply_move_idx(cube, 2)
    np.testing.assert_array_equal(cube, before)
    assert not np.shares_memory(out, cube)
    out[...] = 9
    np.testing.assert_array_equal(cube, before)


def test_apply_move_idx_accepts_numpy_ints_and_rejects_bad_actions():
    np.testing.assert_array_equal(apply_move_idx(LABELS, np.int64(3)), apply_move_idx(LABELS, 3))
    for bad in (-1, 12, 100):
        with pytest.raises(ValueError):
            apply_move_idx(solved_cube(), bad)


def test_is_solved():
    assert is_solved(solved_cube())
    assert is_solved(SOLVED_STICKERS)
    for a in range(NUM_ACTIONS):
        assert not is_solved(apply_move_idx(solved_cube(), a))
    # Whole-cube rotations of the solved cube are solved (faces uniform, other colours).
    for text in ("R L'", "L' R", "U D'", "F B'", "R L' U D'", "F B' F B'", "R L' F B' U D' U D'"):
        cube = apply_moves(solved_cube(), parse_moves(text))
        assert not np.array_equal(cube, solved_cube())
        assert is_solved(cube), text
    # Any colouring with uniform faces counts; one swapped pair of stickers does not.
    assert is_solved(np.repeat(np.array([5, 3, 1, 0, 2, 4], np.int8), 4))
    broken = SOLVED_STICKERS.copy()
    broken[[3, 4]] = broken[[4, 3]]
    assert not is_solved(broken)
    assert isinstance(is_solved(solved_cube()), bool)


def test_encode_onehot():
    cube = random_cubes(1, seed=3)[0].reshape(6, 2, 2)
    obs = encode_onehot(cube)
    assert obs.shape == (144,) and obs.dtype == np.float32
    assert set(np.unique(obs)) <= {0.0, 1.0}
    table = obs.reshape(24, 6)  # sticker-major: (24, 6) flattened
    np.testing.assert_array_equal(table.sum(axis=1), np.ones(24))
    np.testing.assert_array_equal(table.argmax(axis=1), cube.reshape(-1))
    np.testing.assert_array_equal(encode_onehot(cube.reshape(-1)), obs)
    solved = encode_onehot(solved_cube()).reshape(24, 6)
    assert solved[0, 0] == 1 and solved[4, 1] == 1 and solved[23, 5] == 1


def test_move_funcs_table():
    assert sorted(MOVE_FUNCS) == list(range(NUM_ACTIONS))
    cube = random_cubes(1, seed=4)[0].reshape(6, 2, 2)
    for a, (name, func) in MOVE_FUNCS.items():
        assert name == MOVE_NAMES[a]
        assert callable(func)
        np.testing.assert_array_equal(func(cube), apply_move_idx(cube, a))
        np.testing.assert_array_equal(func(LABELS).reshape(-1), MOVE_PERMS[a])


# --------------------------------------------------------------------------- scrambles
def check_no_immediate_inverse(moves: np.ndarray) -> None:
    assert moves.min() >= 0 and moves.max() < NUM_ACTIONS
    assert not (moves[:, 1:] == (moves[:, :-1] ^ 1)).any()


def check_all_other_moves_follow(moves: np.ndarray) -> None:
    """After each move, all 11 moves other than its inverse occur, about equally often."""
    prev, nxt = moves[:, :-1].ravel(), moves[:, 1:].ravel()
    pairs = np.zeros((NUM_ACTIONS, NUM_ACTIONS), int)
    np.add.at(pairs, (prev, nxt), 1)
    for a in range(NUM_ACTIONS):
        followers = set(np.flatnonzero(pairs[a]))
        assert followers == set(range(NUM_ACTIONS)) - {a ^ 1}, a
        freq = pairs[a][pairs[a] > 0] / pairs[a].sum()
        assert np.abs(freq - 1 / 11).max() < 0.03


def test_scramble_moves_rule():
    rng = np.random.default_rng(11)
    moves = scramble_moves(rng, 6000, 5)
    assert moves.shape == (6000, 5)
    check_no_immediate_inverse(moves)
    check_all_other_moves_follow(moves)
    assert set(moves[:, 0]) == set(range(NUM_ACTIONS))
    assert scramble_moves(rng, 3, 0).shape == (3, 0)
    np.testing.assert_array_equal(
        scramble_moves(np.random.default_rng(1), 4, 6), scramble_moves(np.random.default_rng(1), 4, 6)
    )


def test_batch_scramble_rule_and_cubes():
    cubes, moves = batch_scramble(np.random.default_rng(12), 4000, 4)
    assert cubes.shape == (4000, 24) and cubes.dtype == np.int8 and moves.shape == (4000, 4)
    check_no_immediate_inverse(moves)
    check_all_other_moves_follow(moves)
    for i in range(0, 4000, 37):  # row by row against the single-cube functions
        np.testing.assert_array_equal(cubes[i], apply_moves(SOLVED_STICKERS, moves[i]))
    solved, none = batch_scramble(np.random.default_rng(0), 5, 0)
    assert none.shape == (5, 0) and batch_is_solved(solved).all()


def test_scramble_takes_the_seeds_default_of_8_moves():
    """``scramble(cube)`` as the original's scripts call it: 8 moves, the sequence's permutation of the labels."""
    moves = scramble_moves(np.random.default_rng(2), 1, 8)[0]
    np.testing.assert_array_equal(
        scramble(LABELS, rng=np.random.default_rng(2)), LABELS.reshape(-1)[perm_of(moves)].reshape(6, 2, 2)
    )


def test_scramble_never_undoes_the_last_move():
    """``scramble`` only returns a cube: with labelled stickers the result is the move
    sequence's permutation. Two moves are never ``X X'`` (which would give the identity), and
    every other pair occurs: 12*11 pairs give 114 distinct permutations (X X = X' X', and
    opposite faces commute)."""
    allowed = {perm_of([a, b]).tobytes() for a in range(NUM_ACTIONS) for b in range(NUM_ACTIONS) if b != a ^ 1}
    assert len(allowed) == 114
    rng = np.random.default_rng(13)
    seen = set()
    for _ in range(2500):
        out = scramble(LABELS, 2, rng)
        assert out.shape == (6, 2, 2) and out.dtype == LABELS.dtype
        key = out.reshape(-1).astype(np.intp).tobytes()
        assert key != IDENTITY.tobytes()
        seen.add(key)
    assert seen == allowed


def test_scramble_seed_api():
    cube = scramble(solved_cube(), 5)  # the original's signature: global randomness
    assert cube.shape == (6, 2, 2) and cube.dtype == np.int8
    assert sorted(np.bincount(cube.reshape(-1))) == [4] * 6
    a = scramble(solved_cube(), 8, np.random.default_rng(5))
    b = scramble(solved_cube(), 8, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(scramble(solved_cube(), 0), solved_cube())


# --------------------------------------------------------------------------- batched helpers, row by row
def test_batch_apply_moves_matches_single():
    rng = np.random.default_rng(20)
    cubes = random_cubes(300, seed=20)
    actions = rng.integers(0, NUM_ACTIONS, size=300)
    before = cubes.copy()
    out = batch_apply_moves(cubes, actions)
    assert out.shape == (300, 24) and out.dtype == np.int8
    np.testing.assert_array_equal(cubes, before)
    for i in range(300):
        np.testing.assert_array_equal(out[i], apply_move_idx(cubes[i], actions[i]))


def test_batch_is_solved_matches_single():
    rotations = [apply_moves(SOLVED_STICKERS, parse_moves(t)) for t in ("R L'", "U D'", "F B' R L'")]
    one_move = [apply_move_idx(SOLVED_STICKERS, a) for a in range(NUM_ACTIONS)]
    cubes = np.concatenate([random_cubes(50, k=3, seed=21), np.stack(rotations + one_move + [SOLVED_STICKERS])])
    out = batch_is_solved(cubes)
    assert out.shape == (len(cubes),) and out.dtype == bool
    expected = [is_solved(c) for c in cubes]
    assert out.tolist() == expected
    assert sum(expected) >= 4 and not all(expected)


def test_batch_onehot_matches_single():
    cubes = random_cubes(100, seed=22)
    obs = batch_onehot(cubes)
    assert obs.shape == (100, 144) and obs.dtype == np.float32
    for i in range(100):
        np.testing.assert_array_equal(obs[i], encode_onehot(cubes[i]))


def test_legal_action_mask_rules():
    np.testing.assert_array_equal(legal_action_mask(NO_ACTION, 0), np.ones(12, bool))
    np.testing.assert_array_equal(legal_action_mask(None, 0), np.ones(12, bool))
    for a in range(NUM_ACTIONS):
        face = {2 * (a // 2), 2 * (a // 2) + 1}
        for count in range(0, 5):
            mask = legal_action_mask(a, count)
            assert mask.shape == (12,) and mask.dtype == bool
            illegal = set(np.flatnonzero(~mask))
            assert illegal == (face if count >= 2 else {a ^ 1}), (a, count)


def test_legal_action_mask_on_arrays_matches_scalars():
    lasts, counts = np.meshgrid(np.arange(-1, NUM_ACTIONS), np.arange(5), indexing="ij")
    masks = legal_action_mask(lasts, counts)
    assert masks.shape == (13, 5, 12)
    for i, last in enumerate(range(-1, NUM_ACTIONS)):
        for count in range(5):
            np.testing.assert_array_equal(masks[i, count], legal_action_mask(last, count))
    flat = legal_action_mask(lasts.ravel(), counts.ravel())
    np.testing.assert_array_equal(flat, masks.reshape(-1, 12))


def test_next_face_count():
    U, U_, R = 0, 1, 2
    assert next_face_count(NO_ACTION, 0, U) == 1
    assert next_face_count(U, 1, U) == 2
    assert next_face_count(U, 2, U_) == 3  # same face, either direction
    assert next_face_count(U, 2, R) == 1
    out = next_face_count(np.array([NO_ACTION, U, U, R]), np.array([0, 1, 2, 1]), np.array([U, U, R, 3]))
    assert out.tolist() == [1, 2, 1, 2]


def test_batch_state_keys():
    cubes = np.concatenate([random_cubes(2000, k=8, seed=23), SOLVED_STICKERS[None], np.full((1, 24), 5, np.int8)])
    keys = batch_state_keys(cubes)
    assert keys.shape == (len(cubes),) and keys.dtype == np.int64
    for i in range(0, len(cubes), 97):  # row by row: the cube as a base-6 number
        assert int(keys[i]) == sum(int(s) * 6**j for j, s in enumerate(cubes[i]))
    assert int(keys[-1]) == 6**24 - 1  # the largest key still fits in an int64
    # Injective: distinct cubes, distinct keys.
    assert len(np.unique(keys)) == len(np.unique(cubes, axis=0))
    np.testing.assert_array_equal(batch_state_keys(cubes.reshape(-1, 6, 2, 2)), keys)


# --------------------------------------------------------------------------- move strings
def test_parse_and_format_moves():
    assert parse_moves("R U R' U'") == [2, 0, 3, 1]
    assert format_moves([2, 0, 3, 1]) == "R U R' U'"
    assert format_moves(parse_moves("R U R' U'")) == "R U R' U'"
    everything = " ".join(MOVE_NAMES)
    assert parse_moves(everything) == list(range(NUM_ACTIONS))
    assert format_moves(range(NUM_ACTIONS)) == everything
    assert format_moves(np.array([10, 11])) == "D D'"
    assert parse_moves("  F   B' ") == [4, 9]
    assert parse_moves("") == [] and format_moves([]) == ""
    assert parse_moves(["L", "D'"]) == [6, 11]


def test_half_turns_are_two_quarter_turns():
    for name in "URFLBD":
        a = MOVE_NAMES.index(name)
        assert parse_moves(f"{name}2") == [a, a]
    assert parse_moves("R2 U") == [2, 2, 0]
    np.testing.assert_array_equal(apply_moves(IDENTITY, parse_moves("F2")), perm_of([4, 4]))


@pytest.mark.parametrize("bad", ["X", "R3", "u", "R''", "R'2", "RU", "2", "U2'", "R U x"])
def test_unknown_move_raises_and_lists_valid_moves(bad):
    with pytest.raises(ValueError) as info:
        parse_moves(bad)
    message = str(info.value)
    tokens = set(re.split(r"[\s,;:()\[\]]+", message))
    assert set(MOVE_NAMES) <= tokens, message


@pytest.mark.usefixtures("isolated_solver_cache")
def test_whole_cube_rotations_are_24_and_keep_the_position():
    from Optimal_Solver import get_solver
    from Rubik2x2Env import ROTATION_PERMS, batch_rotate

    assert ROTATION_PERMS.shape == (24, 24) and np.array_equal(ROTATION_PERMS[0], np.arange(24))
    turned = batch_rotate(np.tile(SOLVED_STICKERS, (24, 1)), np.arange(24))
    assert batch_is_solved(turned).all() and len({t.tobytes() for t in turned}) == 24
    cubes, _ = batch_scramble(np.random.default_rng(0), 200, 10)
    rot = np.random.default_rng(1).integers(0, 24, 200)
    solver = get_solver()
    assert np.array_equal(solver.batch_distance(batch_rotate(cubes, rot)), solver.batch_distance(cubes))


def test_canonical_orientation_is_one_rotation_per_cube_and_moves_rename_consistently():
    from Rubik2x2Env import (
        CANONICAL_SLOT_COLOURS,
        CANONICAL_SLOT_READS,
        ROTATION_MOVE_MAP,
        ROTATION_PERMS,
        batch_rotate,
        canonical_rotation,
    )

    rng = np.random.default_rng(3)
    cubes, _ = batch_scramble(rng, 300, 20)
    # Exactly one of the 24 rotations puts the D-L-B cubie home with D down.
    every = batch_rotate(np.repeat(cubes, 24, axis=0), np.tile(np.arange(24), len(cubes)))
    fits = (every[:, CANONICAL_SLOT_READS[0]] == CANONICAL_SLOT_COLOURS).all(axis=1).reshape(-1, 24)
    assert (fits.sum(axis=1) == 1).all()
    assert np.array_equal(fits.argmax(axis=1), canonical_rotation(cubes))
    assert canonical_rotation(SOLVED_STICKERS)[0] == 0 and list(CANONICAL_SLOT_COLOURS) == [3, 4, 5]
    # All orientations of a position share one canonical cube.
    canon = batch_rotate(cubes, canonical_rotation(cubes))
    turned = batch_rotate(cubes, rng.integers(0, 24, len(cubes)))
    assert np.array_equal(batch_rotate(turned, canonical_rotation(turned)), canon)
    # A move seen in a turned frame is the renamed move: rotate(apply(s, a)) == apply(rotate(s), map[a]).
    assert all(sorted(row) == list(range(NUM_ACTIONS)) for row in ROTATION_MOVE_MAP)
    assert np.array_equal(ROTATION_MOVE_MAP[0], np.arange(NUM_ACTIONS))
    for r in range(len(ROTATION_PERMS)):
        for a in range(NUM_ACTIONS):
            lhs = batch_rotate(batch_apply_moves(cubes, np.full(len(cubes), a)), np.full(len(cubes), r))
            rhs = batch_apply_moves(
                batch_rotate(cubes, np.full(len(cubes), r)), np.full(len(cubes), ROTATION_MOVE_MAP[r, a])
            )
            assert np.array_equal(lhs, rhs)


@pytest.mark.usefixtures("isolated_solver_cache")
def test_mirror_image_is_a_real_cube_at_the_same_distance():
    from Optimal_Solver import get_solver
    from Rubik2x2Env import (
        CANONICAL_SLOT_COLOURS,
        CANONICAL_SLOT_READS,
        MIRROR_MOVE_MAP,
        batch_mirror,
        batch_rotate,
        canonical_rotation,
    )

    cubes, _ = batch_scramble(np.random.default_rng(6), 300, 14)
    image = batch_mirror(cubes)
    assert np.array_equal(batch_mirror(image), cubes) and not np.array_equal(image, cubes)
    assert batch_is_solved(batch_mirror(SOLVED_STICKERS[None])).all()
    # A real cube: it has a canonical orientation (no mirrored corner), and the same distance.
    canon = batch_rotate(image, canonical_rotation(image))
    assert (canon[:, CANONICAL_SLOT_READS[0]] == CANONICAL_SLOT_COLOURS).all()
    solver = get_solver()
    assert np.array_equal(solver.batch_distance(image), solver.batch_distance(cubes))
    assert [MOVE_NAMES[a] for a in MIRROR_MOVE_MAP[[0, 2, 6]]] == ["U'", "L'", "R'"]
    for a in range(NUM_ACTIONS):
        moved = batch_apply_moves(cubes, np.full(len(cubes), a))
        assert np.array_equal(batch_mirror(moved), batch_apply_moves(image, np.full(len(cubes), MIRROR_MOVE_MAP[a])))


@pytest.mark.usefixtures("isolated_solver_cache")
def test_the_48_symmetries_keep_distances_and_rename_moves():
    from Optimal_Solver import get_solver
    from Rubik2x2Env import MIRROR_MOVE_MAP, SYMMETRY_COLOURS, SYMMETRY_MOVE_MAP, batch_mirror, batch_symmetry

    assert len({tuple(c) for c in SYMMETRY_COLOURS}) == 48 and list(SYMMETRY_COLOURS[0]) == list(range(6))
    cubes, _ = batch_scramble(np.random.default_rng(7), 200, 14)
    assert np.array_equal(batch_symmetry(cubes, np.zeros(len(cubes), int)), cubes)
    assert np.array_equal(batch_symmetry(cubes, np.full(len(cubes), 24)), batch_mirror(cubes))
    assert (
        np.array_equal(SYMMETRY_MOVE_MAP[24], MIRROR_MOVE_MAP)
        and (SYMMETRY_MOVE_MAP[:24] == np.arange(NUM_ACTIONS)).all()
    )
    solver = get_solver()
    distance = solver.batch_distance(cubes)
    for k in range(48):
        image = batch_symmetry(cubes, np.full(len(cubes), k))
        assert batch_is_solved(batch_symmetry(SOLVED_STICKERS[None], [k])).all()
        assert np.array_equal(solver.batch_distance(image), distance)  # a real cube (else ValueError), same distance
        for a in range(NUM_ACTIONS):
            moved = batch_apply_moves(cubes, np.full(len(cubes), a))
            assert np.array_equal(
                batch_symmetry(moved, np.full(len(cubes), k)),
                batch_apply_moves(image, np.full(len(cubes), SYMMETRY_MOVE_MAP[k, a])),
            )
    # Renamings other than the identity give other positions (not just a turned cube).
    from Rubik2x2Env import batch_rotate, canonical_rotation

    canon = lambda c: batch_rotate(c, canonical_rotation(c))
    assert not np.array_equal(canon(batch_symmetry(cubes, np.full(len(cubes), 5))), canon(cubes))
