"""The 3x3: the cube model against the shared vectors, the group its moves generate, kociemba as
the reference, the Gymnasium env, the solvers on the 3x3 (never a claim that does not replay),
the puzzle description and the --puzzle flag of the scripts."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import Rubik2x2Env as E2
from conftest import REPO, VECTOR_PATHS_3X3, make_checkpoint
from cube import Cube_Model
from cube import Kociemba_Solver as K
from cube import Rubik3x3Env as E3
from cube import Solvers as S
from cube import Tree_Searches as T
from cube.Cube_Checkpoints import load_model
from cube.Puzzles import PUZZLES, add_puzzle_flag, get_puzzle
from Policy_Value_Net import PolicyValueNet
from run.Checkpoints import save_checkpoint
from run.Run_IO import CheckpointError

P3 = PUZZLES["3x3"]
IDENTITY = np.arange(54)
LABELS = np.arange(54, dtype=np.int16).reshape(6, 3, 3)  # every sticker its own label
GROUP_ORDER_3X3 = 43_252_003_274_489_856_000


def random_cubes(n: int, k: int, seed: int = 0) -> np.ndarray:
    return E3.batch_scramble(np.random.default_rng(seed), n, k)[0]


# --------------------------------------------------------------------------- against the vectors
def test_vector_copies_agree():
    """tests/vectors is a copy of ../shared/vectors for checkouts without ../shared."""
    found = [json.loads(p.read_text()) for p in VECTOR_PATHS_3X3 if p.is_file()]
    assert found, "no copy of cube3x3.json found"
    assert all(v == found[0] for v in found)


def test_names_solved_and_group_order_match_vectors(vectors3x3):
    assert list(E3.MOVE_NAMES) == vectors3x3["move_names"] == list(E2.MOVE_NAMES)
    assert E3.solved_cube().reshape(-1).tolist() == vectors3x3["solved"]
    assert E3.solved_cube().shape == (6, 3, 3) and E3.solved_cube().dtype == np.int8
    assert int(vectors3x3["group_order"]) == GROUP_ORDER_3X3  # a string in the file: beyond 2**64


@pytest.mark.parametrize("action", range(12))
def test_move_equals_vector_permutation(vectors3x3, action):
    perm = vectors3x3["move_perms"][E3.MOVE_NAMES[action]]
    assert E3.MOVE_PERMS[action].tolist() == perm
    assert E3.apply_move_idx(IDENTITY, action).tolist() == perm  # the function, on labelled stickers
    assert E3.apply_move_idx(LABELS, action).reshape(-1).tolist() == perm
    assert (
        E3.MOVE_FUNCS[action][1](E3.solved_cube()).reshape(-1).tolist() == np.array(vectors3x3["solved"])[perm].tolist()
    )


def test_examples_give_listed_stickers_one_by_one_and_batched(vectors3x3):
    examples = vectors3x3["examples"]
    assert len(examples) >= 10
    for ex in examples:
        cube = E3.apply_moves(E3.solved_cube(), E3.parse_moves(ex["scramble"]))
        assert cube.reshape(-1).tolist() == ex["stickers"], ex["scramble"]
        env = E3.Rubik3x3Env()
        env.reset(options={"scramble": ex["scramble"]})
        assert env.stickers.tolist() == ex["stickers"]
    # Batched: pad with no-ops.
    seqs = [E3.parse_moves(ex["scramble"]) for ex in examples]
    longest = max(map(len, seqs))
    cubes = np.tile(E3.SOLVED_STICKERS, (len(seqs), 1))
    for i in range(longest):
        actions = np.array([(s + [-1] * longest)[i] for s in seqs])
        cubes = np.where(actions[:, None] >= 0, E3.batch_apply_moves(cubes, np.maximum(actions, 0)), cubes)
    np.testing.assert_array_equal(cubes, np.array([ex["stickers"] for ex in examples]))


def test_shared_geometry_derives_both_sizes():
    """One geometry makes both cubes' moves: the 2x2's are still its own vectors' (test_cube), and
    both modules use the same code, mask rule and move strings."""
    np.testing.assert_array_equal(Cube_Model.move_perms(2), E2.MOVE_PERMS)
    np.testing.assert_array_equal(Cube_Model.move_perms(3), E3.MOVE_PERMS)
    assert E3.legal_action_mask is E2.legal_action_mask is Cube_Model.legal_action_mask
    assert E3.parse_moves is E2.parse_moves and E3.scramble_moves is E2.scramble_moves


# --------------------------------------------------------------------------- group structure
@pytest.mark.parametrize("action", range(12))
def test_quarter_turn_structure(action):
    perm = E3.MOVE_PERMS[action]
    assert (perm != IDENTITY).sum() == 20  # 8 on the face, 3 on each of 4 sides
    assert all(perm[c] == c for c in E3.CENTRES)  # centres never move
    four = E3.apply_moves(IDENTITY, [action] * 4)
    np.testing.assert_array_equal(four, IDENTITY)
    np.testing.assert_array_equal(E3.apply_moves(IDENTITY, [action, action ^ 1]), IDENTITY)
    np.testing.assert_array_equal(E3.apply_moves(IDENTITY, [action] * 3), E3.MOVE_PERMS[action ^ 1])


def test_opposite_faces_commute_adjacent_do_not():
    U, R, F, L, B, D = (E3.MOVE_NAMES.index(m) for m in "URFLBD")
    for a, b in ((U, D), (R, L), (F, B)):
        np.testing.assert_array_equal(E3.apply_moves(IDENTITY, [a, b]), E3.apply_moves(IDENTITY, [b, a]))
    for a, b in ((U, R), (R, F), (F, D)):
        assert not np.array_equal(E3.apply_moves(IDENTITY, [a, b]), E3.apply_moves(IDENTITY, [b, a]))


def schreier_sims_order(generators) -> int:
    """Order of the group generated by ``generators`` (permutations as sequences, ``p[i]`` the
    image of ``i``), by the deterministic incremental Schreier-Sims algorithm: a base and strong
    generating set built level by level; every Schreier generator of a level is sifted into the
    next one, so the product of the basic orbit sizes is exactly the group order."""
    gens = [tuple(int(x) for x in g) for g in generators]
    n = len(gens[0])
    identity = tuple(range(n))

    def mul(a, b):  # a then b
        return tuple([b[x] for x in a])

    def inverse(a):
        out = [0] * n
        for i, x in enumerate(a):
            out[x] = i
        return tuple(out)

    base: list[int] = []  # base point of each level
    strong: list[list[tuple]] = []  # generators of each level's group (it fixes the earlier base points)
    reach: list[dict] = []  # per level: orbit point q -> (t, t^-1), t taking the base point to q

    def sift(level: int, g: tuple) -> tuple:
        for i in range(level, len(base)):
            image = g[base[i]]
            if image not in reach[i]:
                return g
            g = mul(g, reach[i][image][1])
        return g

    def extend(level: int, g: tuple) -> None:
        g = sift(level, g)
        if g == identity:
            return
        if level == len(base):
            point = next(p for p in range(n) if g[p] != p)
            base.append(point)
            strong.append([])
            reach.append({point: (identity, identity)})
        strong[level].append(g)
        edges = [(p, g) for p in list(reach[level])]
        while edges:
            p, s = edges.pop()
            q, t = s[p], mul(reach[level][p][0], s)
            if q not in reach[level]:
                reach[level][q] = (t, inverse(t))
                edges += [(q, s2) for s2 in strong[level]]
            else:  # a Schreier generator: it fixes the base point, so it belongs one level down
                extend(level + 1, mul(t, reach[level][q][1]))

    for g in gens:
        extend(0, g)
    order = 1
    for orbit in reach:
        order *= len(orbit)
    return order


def test_schreier_sims_on_known_groups():
    """The algorithm itself, on groups of known order: the 2x2 (3,674,160 positions times 24
    orientations, since its opposite faces turn it as a whole), <U, R, F> of the 2x2 (the
    positions with one corner fixed), <U, R> of the 2x2 (29,160) and of the 3x3 (73,483,200)."""
    assert schreier_sims_order(E2.MOVE_PERMS) == 3_674_160 * 24
    assert schreier_sims_order(E2.MOVE_PERMS[[0, 2, 4]]) == 3_674_160
    assert schreier_sims_order(E2.MOVE_PERMS[[0, 2]]) == 29_160
    assert schreier_sims_order(E3.MOVE_PERMS[[0, 2]]) == 73_483_200
    assert schreier_sims_order([[1, 2, 0, 3], [1, 0, 2, 3]]) == 6


def test_twelve_moves_generate_the_cube_group():
    assert schreier_sims_order(E3.MOVE_PERMS) == GROUP_ORDER_3X3
    assert schreier_sims_order(E3.MOVE_PERMS[::2]) == GROUP_ORDER_3X3  # the clockwise six suffice


# --------------------------------------------------------------------------- batched helpers, keys, strings
def test_batched_helpers_and_exact_keys():
    cubes = random_cubes(300, 12, seed=1)
    assert cubes.shape == (300, 54) and cubes.dtype == np.int8
    onehot = E3.batch_onehot(cubes)
    assert onehot.shape == (300, 324) and onehot.dtype == np.float32
    np.testing.assert_array_equal(onehot.reshape(300, 54, 6).argmax(axis=2), cubes)
    np.testing.assert_array_equal(E3.encode_onehot(cubes[0]), onehot[0])
    assert not E3.batch_is_solved(cubes).any() and E3.batch_is_solved(E3.SOLVED_STICKERS[None])[0]
    keys = E3.batch_state_keys(cubes)
    assert keys.dtype == E3.MODEL.key_dtype and keys.dtype.names == ("k0", "k1")
    distinct = {c.tobytes() for c in cubes}
    assert len(np.unique(keys)) == len(distinct) == len(set(keys.tolist()))
    # Exact: two stickers swapped (a state no moves make) is another key.
    other = cubes[0].copy()
    i = int(np.flatnonzero(other != other[0])[0])
    other[[0, i]] = other[[i, 0]]
    assert E3.batch_state_keys(other[None])[0] != keys[0]
    np.testing.assert_array_equal(E3.batch_state_keys(cubes[:5]), keys[:5])  # a function of the stickers


def test_scrambles_follow_the_seed_rule_and_rng():
    a, moves = E3.batch_scramble(np.random.default_rng(4), 50, 25)
    b, again = E3.batch_scramble(np.random.default_rng(4), 50, 25)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(moves, again)
    assert not (moves[:, 1:] == (moves[:, :-1] ^ 1)).any()  # never a move followed by its inverse
    np.testing.assert_array_equal(E3.apply_moves(E3.SOLVED_STICKERS, moves[0]), a[0])


def test_move_strings_half_turns_and_errors():
    assert E3.parse_moves("R2 U'") == [2, 2, 1]
    assert E3.format_moves([2, 2, 1]) == "R R U'"
    with pytest.raises(ValueError, match="valid moves are U U' R R'"):
        E3.parse_moves("R M")


def test_ascii_net():
    text = E3.as_ascii(E3.apply_moves(E3.solved_cube(), E3.parse_moves("R")))
    lines = text.split("\n")
    assert len(lines) == 9
    assert lines[0] == "       U U F"  # R brings F's colour to U's right column
    assert lines[3] == "L L L  F F D  R R R  U B B"
    assert lines[8] == "       D D B"


# --------------------------------------------------------------------------- the env
@pytest.mark.parametrize("render_mode", [None, "ansi"])
def test_env_passes_gymnasium_checker(render_mode):
    env = gym.make("Rubik3x3-v0", render_mode=render_mode)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()


def test_env_seeding_options_and_episode_end():
    env = E3.Rubik3x3Env(scramble_len=15)
    assert env.observation_space.shape == (324,) and env.action_space == gym.spaces.Discrete(12)
    obs, info = env.reset(seed=42)
    first, text = env.stickers.copy(), info["scramble"]
    assert len(E3.parse_moves(text)) == 15 and not info["solved"]
    env.reset(seed=42)
    np.testing.assert_array_equal(env.stickers, first)
    env.reset(seed=43)
    assert not np.array_equal(env.stickers, first)
    np.testing.assert_array_equal(obs, E3.encode_onehot(first))
    env.reset(options={"cube": first})
    np.testing.assert_array_equal(env.stickers, first)
    with pytest.raises(ValueError, match="54 stickers"):
        env.reset(options={"cube": np.zeros(24)})
    # Solve it with kociemba's moves through the env: terminated exactly at the end.
    env.reset(options={"scramble": "R U F' L2"})
    solution = K.solve(env.stickers)
    for i, a in enumerate(solution):
        _, reward, terminated, truncated, info = env.step(a)
        assert reward == 0.0 and terminated == (i == len(solution) - 1) and not truncated
    with pytest.raises(ValueError, match="masked"):
        env.reset(options={"scramble": "R"})
        env.step(2)
        env.step(2)
        env.step(2)  # a third R in a row: rule 2
    assert env.get_action_meanings() == list(E3.MOVE_NAMES)
    assert "U U U" in E3.Rubik3x3Env(render_mode="ansi").render()


# --------------------------------------------------------------------------- kociemba as the reference
def test_facelets_follow_kociembas_numbering():
    """Kociemba's own example cube (its README) read into our stickers, facelet i = sticker i:
    its published solution, played with our moves, solves it. And back: to_facelets gives the
    same string, with colours named by the centres."""
    facelets = "DRLUUBFBRBLURRLRUBLRDDFDLFUFUFFDBRDUBRUFLLFDDBFLUBLRBD"
    solution = "D2 R' D' F2 B D R2 D2 R' F2 D' F2 U' B2 L2 U2 D R2 U"
    stickers = np.array(["URFDLB".index(c) for c in facelets], dtype=np.int8)
    assert E3.is_solved(E3.apply_moves(stickers, E3.parse_moves(solution)))
    assert K.to_facelets(stickers) == facelets
    assert K.to_facelets(E3.SOLVED_STICKERS) == "".join(f * 9 for f in "URFDLB")
    relabelled = (stickers + 1) % 6  # any colour names: the centres say which face each belongs to
    assert K.to_facelets(relabelled) == facelets


@pytest.mark.parametrize("action", range(12))
def test_kociemba_undoes_one_quarter_turn(action):
    assert K.solve(E3.apply_move_idx(E3.SOLVED_STICKERS, action)) == [action ^ 1]


@pytest.mark.slow
def test_kociemba_solutions_solve_our_cubes():
    import kociemba

    cubes = random_cubes(12, 60, seed=5)
    for cube in cubes:
        text = kociemba.solve(K.to_facelets(cube))  # straight from the package, converted here
        moves = E3.parse_moves(text)
        assert E3.is_solved(E3.apply_moves(cube, moves)), text
        assert len(moves) == len(text.split()) + text.count("2")  # quarter turns
        assert len(moves) <= 2 * 24  # at most 24 half-turn moves
    lengths = K.solution_lengths(cubes)
    assert lengths.dtype == np.int64 and (lengths >= 10).all()
    assert K.solve(E3.SOLVED_STICKERS) == [] and P3.reference_lengths(E3.SOLVED_STICKERS[None]).tolist() == [0]
    twisted = E3.SOLVED_STICKERS.copy()
    twisted[[8, 9, 20]] = twisted[[9, 20, 8]]  # the U-R-F corner twisted in place: no moves make it
    with pytest.raises(ValueError, match="not a reachable"):
        K.solve(twisted)


# --------------------------------------------------------------------------- solvers on the 3x3
BFS_DEPTH = 4


@pytest.fixture(scope="module")
def near_table():
    """Exact distances of every 3x3 position within ``BFS_DEPTH`` quarter turns (breadth-first
    search): sorted keys and their distances."""
    keys, dists = [E3.batch_state_keys(E3.SOLVED_STICKERS[None])], [np.zeros(1, np.int64)]
    frontier, seen = E3.SOLVED_STICKERS[None], np.sort(keys[0])
    for d in range(1, BFS_DEPTH + 1):
        children = frontier[:, E3.MOVE_PERMS].reshape(-1, 54)
        child_keys = E3.batch_state_keys(children)
        _, first = np.unique(child_keys, return_index=True)
        children, child_keys = children[first], child_keys[first]
        new = ~T._sorted_contains(seen, child_keys)
        frontier = children[new]
        keys.append(child_keys[new])
        dists.append(np.full(int(new.sum()), d))
        seen = np.sort(np.concatenate([seen, child_keys[new]]))
    keys, dists = np.concatenate(keys), np.concatenate(dists)
    order = np.argsort(keys)
    return keys[order], dists[order]


def test_bfs_counts_are_the_known_ones(near_table):
    assert np.bincount(near_table[1]).tolist() == [1, 12, 114, 1068, 10011]  # QTM, distances 0..4


@pytest.fixture(scope="module")
def near_value(near_table):
    """``1 - 0.03 d`` with the exact distance within the table, ``BFS_DEPTH + 1`` beyond it: exact
    for every child of a position within the table's radius."""
    keys, dists = near_table

    def value_fn(cubes):
        k = E3.batch_state_keys(np.asarray(cubes).reshape(-1, 54))
        at = np.minimum(np.searchsorted(keys, k), len(keys) - 1)
        d = np.where(keys[at] == k, dists[at], BFS_DEPTH + 1)
        return 1.0 - P3.value_per_move * d

    return value_fn


def distance_of(near_table, cubes):
    keys, dists = near_table
    k = E3.batch_state_keys(cubes)
    at = np.searchsorted(keys, k)
    assert (keys[at] == k).all()
    return dists[at]


@pytest.fixture(scope="module")
def short_cubes(near_table):
    cubes = np.concatenate([random_cubes(4, k, seed=k) for k in range(1, BFS_DEPTH + 1)])
    return cubes, distance_of(near_table, cubes)


def check_results(cubes, results):
    assert len(results) == len(cubes)
    for cube, r in zip(cubes, results):
        assert r.solved == S.verify(cube, r.moves, P3) and r.nodes >= 0 and r.seconds >= 0


@pytest.mark.parametrize(
    "name, settings",
    [
        ("greedy", {}),
        ("beam", {"beam_width": 8}),
        ("astar", {"astar_lambda": 1.0, "max_nodes": 20_000}),
    ],
)
def test_solvers_with_an_exact_value_solve_optimally(short_cubes, near_value, name, settings):
    cubes, distances = short_cubes
    results = S.solve_cubes(name, cubes, value_fn=near_value, puzzle="3x3", **settings)
    check_results(cubes, results)
    assert all(r.solved for r in results)
    assert [len(r.moves) for r in results] == distances.tolist()


def test_bestfirst_solves_short_3x3_scrambles(short_cubes):
    cubes, _ = short_cubes
    results = S.solve_cubes("bestfirst", cubes, puzzle=P3, max_nodes=50_000)
    check_results(cubes, results)
    assert all(r.solved for r in results)
    assert T.seed_heuristic(E3.SOLVED_STICKERS, 0, P3)[0] == 72  # the seed's 3x3 count: 12 pairs a face


def test_solvers_never_claim_an_unverified_solve(near_table):
    """Values that lie (every state looks solved) or say nothing, and budgets far too small for
    positions at least 5 moves out: nothing is reported solved, since nothing replays."""
    cubes = random_cubes(6, 30, seed=9)
    keys = near_table[0]
    k = E3.batch_state_keys(cubes)
    assert not (keys[np.minimum(np.searchsorted(keys, k), len(keys) - 1)] == k).any()  # all beyond 4 moves

    def liar(c):
        return np.ones(len(c))

    def blank(c):
        return np.zeros(len(c))

    for fn in (liar, blank):
        for name, budget in (("greedy", {"max_moves": 4}), ("beam", {"max_moves": 4}), ("astar", {"max_nodes": 300})):
            results = S.solve_cubes(name, cubes, value_fn=fn, puzzle="3x3", **budget)
            check_results(cubes, results)
            assert not any(r.solved for r in results), (fn.__name__, name)
    results = S.solve_cubes("bestfirst", cubes, puzzle="3x3", max_nodes=300)
    check_results(cubes, results)
    assert not any(r.solved for r in results)


@pytest.mark.slow
def test_network_solvers_and_refusals():
    torch.manual_seed(0)
    net3 = PolicyValueNet(obs_dim=P3.obs_dim)
    cubes = random_cubes(3, 2, seed=2)
    for name in ("greedy", "beam", "astar"):
        results = S.solve_cubes(name, cubes, model=net3, puzzle="3x3", max_moves=6, max_nodes=2000, beam_width=4)
        check_results(cubes, results)
    with pytest.raises(ValueError, match="324"):
        S.solve_cubes("greedy", cubes, model=PolicyValueNet(), puzzle="3x3")  # a 2x2 network
    for name in ("mcts", "gumbel"):  # the game searches take any puzzle
        results = S.solve_cubes(name, cubes, model=net3, puzzle="3x3", sims=8, max_moves=3)
        check_results(cubes, results)
        assert [r.nodes for r in results] == [8 * len(r.moves) for r in results] == [24] * len(cubes)
        with pytest.raises(ValueError, match="324"):
            S.solve_cubes(name, cubes, model=PolicyValueNet(), puzzle="3x3")  # a 2x2 network
    with pytest.raises(ValueError, match="2x2's"):
        PolicyValueNet(obs_dim=P3.obs_dim, canonical_orientation=True)


# --------------------------------------------------------------------------- the puzzle description
def test_puzzles_describe_both_cubes():
    p2 = get_puzzle()
    assert p2 is PUZZLES["2x2"] and get_puzzle("3x3") is P3 and get_puzzle(P3) is P3
    assert (p2.num_stickers, p2.obs_dim, p2.num_actions, p2.size) == (24, 144, 12, 2)
    assert (P3.num_stickers, P3.obs_dim, P3.num_actions, P3.size) == (54, 324, 12, 3)
    assert p2.move_perms is E2.MOVE_PERMS and p2.solved is E2.SOLVED_STICKERS  # the 2x2's own tables
    assert P3.move_perms is E3.MOVE_PERMS and P3.key_dtype.names == ("k0", "k1")
    assert p2.key_dtype == np.int64 and p2.state_keys is not None
    assert isinstance(P3.make_env(), E3.Rubik3x3Env) and isinstance(p2.make_env(), E2.Rubik2x2Env)
    assert P3.reference == "kociemba" and p2.reference == "optimal"
    with pytest.raises(ValueError, match="2x2, 3x3"):
        get_puzzle("4x4")


def test_puzzle_flag_errors_are_one_line_exit_2(capsys):
    from run import Cli

    parser = Cli.ArgumentParser(prog="x")
    add_puzzle_flag(parser)
    assert parser.parse_args([]).puzzle == "2x2"
    assert parser.parse_args(["--puzzle", "3x3"]).puzzle == "3x3"
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--puzzle", "4x4"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be one of 2x2, 3x3, got '4x4'" in err


def test_checkpoints_know_their_puzzle(tmp_path):
    torch.manual_seed(0)
    path3 = tmp_path / "net3.pt"
    save_checkpoint(PolicyValueNet(obs_dim=324), str(path3))
    assert load_model(str(path3), puzzle="3x3").obs_dim == 324
    assert load_model(str(path3)).obs_dim == 324  # no puzzle given: the shapes say which
    path2 = make_checkpoint(tmp_path / "net2.pt")
    with pytest.raises(CheckpointError, match="network for the 2x2, not the 3x3"):
        load_model(str(path2), puzzle="3x3")
    with pytest.raises(CheckpointError, match="network for the 3x3, not the 2x2"):
        load_model(str(path3), puzzle="2x2")


# --------------------------------------------------------------------------- the scripts
def run_script(script: str, args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / script), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def runner():
    """test.py, loaded under another name (pytest would take a module named ``test`` for its own)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("runner_3x3", REPO / "test.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_scripts_refuse_a_bad_puzzle_in_one_line(tmp_path):
    """End to end, as a user sees it: one line on stderr, exit status 2, no traceback, no files."""
    for script in ("evaluate.py", "test.py"):
        proc = run_script(script, ["--puzzle", "4x4"], tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "argument --puzzle: must be one of 2x2, 3x3, got '4x4'" in proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["--puzzle", "3x3", "--solver", "beam", "--by-distance"], "--by-distance needs the 2x2's exact distances"),
        (["--puzzle", "3x3", "--solver", "beam", "--all-positions"], "--all-positions is the 2x2's"),
    ],
)
def test_flag_combinations_the_3x3_cannot_run(args, message, capsys):
    """evaluate.py's modes that need the 2x2's exact table: exit status 2, one line."""
    import evaluate

    with pytest.raises(SystemExit) as exc:
        evaluate.parse_args(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("name", S.SOLVER_NAMES)
def test_every_solver_is_taken_for_the_3x3_by_the_scripts(name, runner):
    """evaluate.py and test.py take every ``--solver`` on the 3x3 (mcts and gumbel too), with the flags
    the 2x2 has: the simulations, the move limit and c_puct reach the solver's options."""
    import evaluate

    for module in (evaluate, runner):
        args = module.parse_args(
            ["--puzzle", "3x3", "--solver", name, "--sims", "7", "--max-steps", "9", "--c-puct", "2.5"]
        )
        o = S.options_from_args(args)
        assert args.solver == name and (o.sims, o.max_moves, o.c_puct) == (7, 9, 2.5)


def _budgets(options: S.SolverOptions) -> tuple:
    return options.beam_width, options.max_nodes, options.seconds, options.beam_rank, options.astar_batch


def test_3x3_without_solver_flags_gets_its_default_solver(runner):
    """The README's ``evaluate.py --puzzle 3x3 --uniform 100``: no --solver is the 3x3's mixed beam of
    4,000 from 8 views with a minute a cube (docs/puzzles.md); a budget flag given wins; --solver beam
    alone keeps the solver's own defaults, and the 2x2 keeps MCTS with every default."""
    import evaluate

    for module in (evaluate, runner):
        args = module.parse_args(["--puzzle", "3x3"])
        o = S.options_from_args(args)
        assert args.solver == "beam" and o.max_moves == 100
        settings = (o.beam_width, o.beam_rank, o.symmetries, o.views, o.ends, o.max_nodes, o.seconds)
        assert settings == (4000, "mixed", 1, 8, 6, 16_000_000, 60)
        o = S.options_from_args(module.parse_args(["--puzzle", "3x3", "--beam-width", "4", "--time-limit", "5"]))
        assert (o.beam_width, o.beam_rank, o.max_nodes, o.seconds) == (4, "mixed", 16_000_000, 5)
        o = S.options_from_args(module.parse_args(["--puzzle", "3x3", "--solver", "beam"]))
        assert _budgets(o) == _budgets(S.SolverOptions())
        args = module.parse_args([])
        o = S.options_from_args(args)
        assert args.solver == "mcts" and o.max_moves == 40 and _budgets(o) == _budgets(S.SolverOptions())


@pytest.mark.slow
def test_evaluate_3x3_scramble_file_and_lengths(tmp_path, capsys):
    import evaluate

    torch.manual_seed(0)
    model = tmp_path / "net3.pt"
    save_checkpoint(PolicyValueNet(obs_dim=324), str(model))
    scrambles = tmp_path / "s.txt"
    scrambles.write_text("R U F'\n# a comment\nR2 D\nU\n")
    out = tmp_path / "out.json"
    common = ["--puzzle", "3x3", "--checkpoint", str(model), "--max-nodes", "2000", "--device", "cpu"]
    assert evaluate.main([*common, "--solver", "astar", "--scrambles", str(scrambles), "--out", str(out)]) == 0
    records = json.loads(out.read_text())
    assert [r["line"] for r in records] == [1, 3, 4]
    assert set(records[0]) == {"line", "scramble", "solution", "solved", "length", "optimal", "kociemba", "nodes",
                               "seconds"}  # fmt: skip
    assert all(r["optimal"] is None for r in records) and [r["kociemba"] for r in records] == [3, 3, 1]
    for r in records:
        cube = E3.apply_moves(E3.SOLVED_STICKERS, E3.parse_moves(r["scramble"]))
        assert r["solved"] == E3.is_solved(E3.apply_moves(cube, E3.parse_moves(r["solution"])))
    text = capsys.readouterr().out
    assert "kociemba" in text and "3x3" in text
    # By scramble length: the same row fields, optimal unknown, kociemba's lengths beside them.
    log = tmp_path / "logs"
    assert evaluate.main([*common, "--solver", "beam", "--max-len", "2", "--runs", "3", "--log-dir", str(log)]) == 0
    rows = json.loads((log / "eval_scramble_result.json").read_text())
    assert [r["scramble_len"] for r in rows] == [1, 2]
    assert all(r["mean_optimal"] is None and r["mean_ratio_to_optimal"] is None for r in rows)
    assert rows[0]["mean_kociemba"] == 1.0 and (log / "eval_bar_chart.png").is_file()
    # A 2x2 model for the 3x3: one sentence, exit status 2.
    two = make_checkpoint(tmp_path / "net2.pt")
    assert evaluate.main([*common[:2], "--solver", "greedy", "--checkpoint", str(two), "--log-dir", str(log)]) == 2
    assert "network for the 2x2, not the 3x3" in capsys.readouterr().err


def test_test_py_3x3_json(runner, capsys):
    args = ["--puzzle", "3x3", "--solver", "bestfirst", "--scramble", "R U2 F'", "--json"]
    assert runner.main(args) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["solved"] and record["puzzle"] == "3x3" and record["optimal"] is None
    assert record["kociemba"] == 4 and record["max_steps"] == P3.default_max_moves
    cube = E3.apply_moves(E3.SOLVED_STICKERS, E3.parse_moves(record["scramble"]))
    assert E3.is_solved(E3.apply_moves(cube, record["actions"]))


# --------------------------------------------------------------------------- MCTS and Gumbel in the scripts
#: The shipped 3x3 network (``--recipe 3x3-long``): it solves short scrambles with a handful of simulations.
SHIPPED_3X3 = str(REPO / "pretrained" / P3.checkpoint)


def replays_to_solved(scramble: str, solution) -> bool:
    """``solution`` (a move string or actions) played on the cube that ``scramble`` makes solves it."""
    moves = E3.parse_moves(solution) if isinstance(solution, str) else solution
    return E3.is_solved(E3.apply_moves(E3.apply_moves(E3.SOLVED_STICKERS, E3.parse_moves(scramble)), moves))


@pytest.mark.parametrize("solver", ["mcts", "gumbel"])
def test_evaluate_3x3_with_the_game_searches(solver, tmp_path):
    """``evaluate.py --puzzle 3x3 --solver mcts|gumbel`` end to end with the shipped network and 4 simulations
    a move: a scramble file's solutions replay to solved, and by scramble length every 1- and 2-move
    scramble is solved in as many moves as kociemba's, 4 simulations per move played."""
    import evaluate

    common = ["--puzzle", "3x3", "--solver", solver, "--checkpoint", SHIPPED_3X3, "--sims", "4", "--device", "cpu"]
    scrambles = tmp_path / "s.txt"
    scrambles.write_text("R U\nF'\nD2 L\n")
    out = tmp_path / "out.json"
    assert evaluate.main([*common, "--scrambles", str(scrambles), "--out", str(out)]) == 0
    records = json.loads(out.read_text())
    assert [r["kociemba"] for r in records] == [2, 1, 3] and all(r["solved"] for r in records)
    assert all(replays_to_solved(r["scramble"], r["solution"]) for r in records)
    assert [r["nodes"] for r in records] == [4 * r["length"] for r in records]
    log = tmp_path / "logs"
    assert evaluate.main([*common, "--max-len", "2", "--runs", "2", "--log-dir", str(log)]) == 0
    rows = json.loads((log / "eval_scramble_result.json").read_text())
    assert [(r["scramble_len"], r["solve_rate"]) for r in rows] == [(1, 1.0), (2, 1.0)]
    assert [r["mean_length"] for r in rows] == [r["mean_kociemba"] for r in rows] == [1.0, 2.0]
    assert [r["mean_nodes"] for r in rows] == [4.0, 8.0]


@pytest.mark.parametrize("solver", ["mcts", "gumbel"])
def test_test_py_3x3_game_searches(solver, runner, capsys):
    """``test.py --puzzle 3x3 --solver mcts|gumbel``: MCTS move by move (``greedy_solve`` on the 3x3's env),
    Gumbel through ``solve_cubes``; the moves printed replay to solved."""
    args = ["--puzzle", "3x3", "--solver", solver, "--checkpoint", SHIPPED_3X3, "--sims", "4", "--device", "cpu"]
    assert runner.main([*args, "--scramble", "R U F'", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["solved"] and record["puzzle"] == "3x3" and record["kociemba"] == 3 == record["length"]
    assert replays_to_solved(record["scramble"], record["actions"]) and record["nodes"] == 4 * record["length"]
    assert runner.main([*args, "--scramble", "R U F'"]) == 0
    text = capsys.readouterr().out
    assert text.count("Step ") == 3 and f"Search ({solver}): 12 simulations" in text
