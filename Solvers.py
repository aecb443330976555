"""Solving given cubes with a network or a heuristic: one result shape, six interchangeable solvers.

Solvers (``SOLVERS``, chosen by name with ``solve_cubes`` or ``--solver``):

* ``mcts`` (default, the original): greedy MCTS episodes, exactly as ``evaluate.py`` plays them
  (``Self_Play.play_greedy``, argmax of the visits each move). ``nodes`` = simulations run.
* ``greedy``: the network alone. Each move, the value of every legal child; play the best
  (a solved child always; lowest action on ties). Batched over all cubes, chunked.
* ``beam``: beam search. Each depth the children of the whole beam are evaluated in one call,
  duplicate states and states an earlier beam held are removed and the ``beam_width`` best
  are kept: ranked by value (``beam_rank="value"``, only new states are evaluated) or by
  cumulative policy log-probability (``"policy"``, for a network trained on scrambles that
  has no value head worth reading).
* ``astar``: DeepCubeA's batch weighted A*: ``f = lambda * g + h`` with ``h`` the value read
  as moves (``Puzzles.value_as_moves``, at least 0). With ``lambda = 1`` and an exact heuristic it is optimal.
* ``bestfirst``: seed 003's greedy best-first search on a hand heuristic (same-colour sticker
  pairs minus 4 per move taken); no network.
* ``gumbel``: Gumbel AlphaZero root search (``Gumbel_MCTS.play_gumbel_episodes``), played
  greedily (``gumbel_scale`` 0: the Sequential Halving winner each move, deterministic),
  ``sims`` simulations per move, all cubes in lockstep. ``nodes`` = simulations run.

Result: every solver returns one ``SolveResult(moves, solved, nodes, seconds)`` per cube.
``solved`` is only True when replaying ``moves`` from the start cube solves it (``verify``):
a solver's claim is never trusted, and a budget that runs out is "not solved". ``nodes``
counts the states a solver generated (children made, each evaluated or checked once), or
MCTS simulations. ``seconds`` is wall-clock time; every network solver advances many cubes
in lockstep (one network call per step for all of them), so it is the batch's time divided
evenly among its cubes, and ``sum(r.seconds)`` is always the total (``bestfirst``, one cube
at a time: each cube's own time).

Lockstep beam and A*: ``beam``/``astar`` search one cube; ``beam_lockstep``/``astar_lockstep``
(what ``solve_cubes`` runs) search many at once, in groups of up to ``LOCKSTEP_CHUNK`` cubes.
Each cube's search is one generator (``_beam_search``, ``_astar_search``) that yields the
states it wants evaluated; the driver sends each its own rows of one joint network call, so a
cube takes exactly the steps it takes alone (for a value that is a function of the position;
a network's float rounding can differ slightly with the batch). Budgets stay per cube; a
``seconds`` limit is read on the cube's share of the lockstep rounds it took part in.

Value scale: the network's value reads ``v ~ 1 - 0.03 d`` for a cube ``d`` moves from solved
(the original's target ``max(0.4, 1 - 0.03 n)``), so ``Puzzles.value_as_moves(v) = (1 - v) / 0.03``
(the puzzle's ``value_per_move``).

Puzzles: every solver takes ``puzzle`` (a ``Puzzles.Puzzle`` or its name; default the 2x2, whose
path reads the same tables as before) and reads from it the stickers, moves, solved test,
encoding and state keys. A 3x3 state key is exact too, two int64 fields (its 48 moving stickers
do not fit one); the searches only sort, compare and hash keys, so both kinds work alike.
``mcts`` and ``gumbel`` search with the 2x2's MCTS machinery and refuse another puzzle
(``solver_puzzle_problem``).

Functions instead of a model: every solver takes ``value_fn(cubes (n, stickers) int8) -> (n,)``
and/or ``policy_fn(cubes) -> logits (n, 12)``. ``network_fns(model)`` builds both from a
network; ``exact_value_fn()`` is the table-backed oracle ``v = 1 - 0.03 * distance``.

Move history: ``last``/``count`` give, per cube, the move that produced it and how many
times in a row its face was turned (default: a fresh cube). Every solver plays only moves
the env's mask allows (``legal_action_mask``), so its solutions can be stepped in the env.

Command line: ``add_solver_arguments(parser)`` adds the flags, ``resolve_solver(args)`` fills in
the puzzle's default solver when ``--solver`` is not given, ``options_from_args(args)`` turns
them into ``SolverOptions``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import heapq
import itertools
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import numpy as np
import torch

import Cli
from Cube_Model import NO_ACTION, NUM_ACTIONS, face_adjacent_pairs
from MCTS_Core import MCTS
from Puzzles import PUZZLES, VALUE_PER_MOVE, Puzzle, get_puzzle, value_as_moves
from Rubik2x2Env import MAX_MOVES, MOVE_PERMS, NUM_STICKERS, batch_state_keys  # noqa: F401 - the 2x2 default; callers read them here
from Search_Tree import C_PUCT
from Self_Play import EpisodeResults, play_greedy

#: ``value_fn(cubes (n, stickers) int8) -> values (n,)``, on the network's scale (1 = solved).
ValueFn = Callable[[np.ndarray], np.ndarray]
#: ``policy_fn(cubes (n, stickers) int8) -> logits (n, 12)`` (any softmax-able scores).
PolicyFn = Callable[[np.ndarray], np.ndarray]

#: The solvers that search with the 2x2's MCTS machinery (its tree, cache and network checks):
#: they refuse another puzzle until that machinery takes one.
TWO_BY_TWO_SOLVERS = ("mcts", "gumbel")
#: The solvers that read ``value_fn`` as a function of each cube alone (so ``solve_cubes`` may
#: hand them ``evaluate_once(value_fn)``: the same values, fewer network rows).
VALUE_SEARCHES = ("greedy", "beam", "astar")
GREEDY_CHUNK = 1 << 16  # cubes per lockstep greedy batch: bounds the (chunk, 12, stickers) children
SOLVER_NAMES = ("mcts", "greedy", "beam", "astar", "bestfirst", "gumbel")
#: The solvers that read a network (``bestfirst`` runs on its hand heuristic alone).
NETWORK_SOLVERS = frozenset(SOLVER_NAMES) - {"bestfirst"}
#: The ``SolverOptions`` fields each solver reads (what a result file records as its options).
SOLVER_FIELDS = {
    "mcts": ("sims", "max_moves", "c_puct"),
    "greedy": ("max_moves",),
    "beam": ("beam_width", "beam_rank", "max_moves", "max_nodes", "seconds"),
    "astar": ("astar_lambda", "astar_batch", "max_nodes", "seconds"),
    "bestfirst": ("max_nodes", "seconds"),
    "gumbel": ("sims", "max_moves", "max_considered"),
}
BEAM_RANKS = ("value", "policy")
F_DECIMALS = 6  # A* compares f = lambda * g + h to a millionth of a move


@dataclass
class SolveResult:
    """One cube's solve: the moves played (action indices 0..11), whether replaying them from
    the start cube solves it, the states generated (MCTS: simulations) and the seconds spent."""

    moves: list[int]
    solved: bool
    nodes: int
    seconds: float


@dataclass
class SolverRun(EpisodeResults):
    """``EpisodeResults`` of any solver, plus per cube the states generated (``nodes``; MCTS:
    simulations) and the seconds (a lockstep batch's time shared evenly among its cubes)."""

    solver: str = "mcts"
    nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cube_seconds: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass
class SolverOptions:
    """Budgets and settings of every solver; each field is one command-line flag."""

    max_moves: int = MAX_MOVES  # moves per cube (mcts, greedy) and beam depth (--max-steps)
    max_nodes: int = 200_000  # states generated per cube (beam, astar, bestfirst) (--max-nodes)
    beam_width: int = 100  # states kept per depth (--beam-width)
    beam_rank: str = "value"  # "value" or "policy" (cumulative log-probability) (--beam-rank)
    # Open nodes each cube expands per A* step (--astar-batch). DeepCubeA batches one cube's
    # nodes to fill the GPU; here the lockstep driver fills the network batch with many cubes,
    # so each expands only its best node: measured on 1,000 uniform positions with the shipped
    # model, batch 1 generates 125 nodes per cube against 6,217 at batch 100, equally optimal.
    astar_batch: int = 1
    astar_lambda: float = 0.6  # weight of the path cost g in f = lambda * g + h (--astar-lambda)
    sims: int = 1000  # MCTS simulations per move (--sims)
    c_puct: float = C_PUCT  # MCTS exploration constant (--c-puct)
    seconds: float | None = None  # time limit per cube for beam, astar, bestfirst (--time-limit)
    seed: int = 0  # MCTS's generator for all-zero visit rows, as evaluate.py (--seed)
    max_considered: int = 16  # actions Gumbel's Sequential Halving starts from at the root


def solver_settings(name: str, options: SolverOptions | None = None) -> dict:
    """The options solver ``name`` reads, as a plain dict (for result files)."""
    opts = options or SolverOptions()
    return {f: getattr(opts, f) for f in SOLVER_FIELDS[name]}


# --------------------------------------------------------------------------- values and verification
def exact_value_fn(solver=None) -> ValueFn:
    """The oracle value ``1 - 0.03 * distance`` from the optimal solver's table (tests, and the
    exhaustive evaluation's upper bound on what a perfect value network could do)."""
    if solver is None:
        from Optimal_Solver import get_solver

        solver = get_solver()

    def value_fn(cubes: np.ndarray) -> np.ndarray:
        return 1.0 - VALUE_PER_MOVE * solver.batch_distance(cubes)

    value_fn.reads_positions = True
    return value_fn


def evaluate_once(fn: ValueFn, puzzle: Puzzle, by_position: bool = False) -> ValueFn:
    """``fn`` that evaluates each distinct cube of a request once and copies its row to the
    others: equal stickers (``state_keys``), or with ``by_position`` equal positions up to a
    whole-cube turn (``position_keys``; only for a value that cannot tell orientations apart,
    such as a network's with a canonical orientation: ``reads_positions``; never a policy,
    whose moves are renamed by a turn). On the 2x2 the 12 children of a cube
    are only 6 positions (``U`` and ``D`` give one), so a value search evaluates half as many."""
    keys_of = puzzle.position_keys if by_position else puzzle.state_keys

    def once(cubes: np.ndarray) -> np.ndarray:
        cubes = np.asarray(cubes).reshape(-1, puzzle.num_stickers)
        _, first, inverse = np.unique(keys_of(cubes), return_index=True, return_inverse=True)
        if len(first) == len(cubes):
            return fn(cubes)
        return np.asarray(fn(cubes[first]))[inverse.reshape(-1)]

    once.reads_positions = getattr(fn, "reads_positions", False)
    return once


def network_fns(
    model: torch.nn.Module, device=None, batch: int = 8192, puzzle: Puzzle | str | None = None
) -> tuple[ValueFn, PolicyFn]:
    """``(value_fn, policy_fn)`` of a policy-value network: eval mode, no gradients, ``batch``
    cubes per forward (bounds memory on millions of cubes); the model's mode is restored.
    ``puzzle`` (default the 2x2) encodes the cubes; a network of another input size is refused
    (ValueError) rather than fed what it was not trained on."""
    puzzle = get_puzzle(puzzle)
    check_network(model, puzzle)
    device = torch.device(device) if device is not None else next(model.parameters()).device

    def forward(cubes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cubes = np.asarray(cubes).reshape(-1, puzzle.num_stickers)
        logits, values = [np.zeros((0, NUM_ACTIONS), np.float32)], [np.zeros(0, np.float32)]
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                for i in range(0, len(cubes), batch):
                    obs = torch.from_numpy(puzzle.encode(cubes[i : i + batch])).to(device)
                    out_logits, out_value = model(obs)
                    logits.append(out_logits.float().cpu().numpy())
                    values.append(out_value.float().reshape(-1).cpu().numpy())
        finally:
            model.train(was_training)
        return np.concatenate(logits), np.concatenate(values)

    def value_fn(cubes: np.ndarray) -> np.ndarray:
        return forward(cubes)[1]

    def policy_fn(cubes: np.ndarray) -> np.ndarray:
        return forward(cubes)[0]

    # ``reads_positions``: a network that turns every input into its canonical orientation reads
    # every orientation of a position alike (the same value; the same policy, its moves renamed),
    # so ``evaluate_once`` may evaluate one of them and beam search may keep one of them.
    value_fn.reads_positions = policy_fn.reads_positions = bool(getattr(model, "canonical", False))
    return value_fn, policy_fn


def check_network(model: torch.nn.Module, puzzle: Puzzle) -> None:
    """Raise ValueError (one sentence) when ``model`` does not take ``puzzle``'s encoding."""
    inputs = getattr(model, "obs_dim", None)
    if inputs is not None and inputs != puzzle.obs_dim:
        raise ValueError(
            f"the network takes {inputs} inputs but the {puzzle.name} is encoded in {puzzle.obs_dim}: "
            f"use a {puzzle.name} model"
        )


def verify(cube: np.ndarray, moves, puzzle: Puzzle | str | None = None) -> bool:
    """True when playing ``moves`` from ``cube`` leaves it solved."""
    puzzle = get_puzzle(puzzle)
    end = puzzle.replay(np.asarray(cube).reshape(puzzle.num_stickers), [int(a) for a in moves])
    return bool(puzzle.is_solved(end.reshape(1, puzzle.num_stickers))[0])


def verify_batch(
    cubes: np.ndarray, moves: np.ndarray, lengths: np.ndarray, puzzle: Puzzle | str | None = None
) -> np.ndarray:
    """``(n,)`` bool: replaying the first ``lengths[i]`` of ``moves[i]`` solves ``cubes[i]``."""
    puzzle = get_puzzle(puzzle)
    cubes = np.array(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    for t in range(moves.shape[1]):
        rows = np.flatnonzero(lengths > t)
        if len(rows) == 0:
            break
        cubes[rows] = puzzle.apply(cubes[rows], moves[rows, t].astype(np.intp))
    return puzzle.is_solved(cubes)


def _history(n: int, last, count) -> tuple[np.ndarray, np.ndarray]:
    """Per-cube last action and face count arrays (default: fresh cubes)."""
    last = np.full(n, NO_ACTION, np.intp) if last is None else np.broadcast_to(np.asarray(last, np.intp), (n,)).copy()
    count = np.zeros(n, np.intp) if count is None else np.broadcast_to(np.asarray(count, np.intp), (n,)).copy()
    count[last == NO_ACTION] = 0
    return last, count


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


# --------------------------------------------------------------------------- greedy
def greedy_batch(
    cubes: np.ndarray,
    value_fn: ValueFn,
    last=None,
    count=None,
    max_moves: int = MAX_MOVES,
    chunk: int = GREEDY_CHUNK,
    puzzle: Puzzle | str | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One-ply lookahead on the value for every cube, in lockstep chunks of ``chunk`` cubes.

    Returns arrays for millions of cubes: ``moves (n, max_moves)`` int8 padded with -1,
    ``lengths (n,)``, ``solved (n,)`` (verified by replay) and ``nodes (n,)`` (legal children
    evaluated or found solved). ``greedy`` wraps it into ``SolveResult`` objects.
    """
    puzzle = get_puzzle(puzzle)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    n = len(cubes)
    last, count = _history(n, last, count)
    moves = np.full((n, max_moves), NO_ACTION, np.int8)
    lengths = np.zeros(n, np.int64)
    nodes = np.zeros(n, np.int64)
    for lo in range(0, n, chunk):
        part = slice(lo, min(lo + chunk, n))
        _greedy_chunk(
            cubes[part].copy(), value_fn, last[part], count[part], moves[part], lengths[part], nodes[part], puzzle
        )
    return moves, lengths, verify_batch(cubes, moves, lengths, puzzle), nodes


def _greedy_chunk(cubes, value_fn, last, count, moves, lengths, nodes, puzzle: Puzzle) -> None:
    """Advance one chunk in place (``moves``, ``lengths``, ``nodes`` are views to fill)."""
    last, count = last.copy(), count.copy()
    active = np.flatnonzero(~puzzle.is_solved(cubes))
    for step in range(moves.shape[1]):
        if len(active) == 0:
            break
        children = cubes[active][:, puzzle.move_perms]  # [k, 12, stickers]
        legal = puzzle.legal_action_mask(last[active], count[active])  # [k, 12]
        solved_child = np.zeros(legal.shape, bool)
        # Only a cube one quarter turn from solved can have a solved child, and such a cube
        # shows at least two one-colour faces (the turned one and its opposite): checking the
        # children of those few is 12 times cheaper than checking every child.
        near = puzzle.uniform_faces(cubes[active]) >= 2
        if near.any():
            solved_child[near] = puzzle.is_solved(children[near].reshape(-1, puzzle.num_stickers)).reshape(
                -1, NUM_ACTIONS
            )
        solved_child &= legal
        todo = legal & ~solved_child
        score = np.full(legal.shape, -np.inf)
        score[todo] = value_fn(children[todo])
        # A solved child is always played: the network's value of a solved cube is not
        # trusted (it was never a training target), and 1.0 may tie with other children.
        score[solved_child] = np.inf
        action = score.argmax(axis=1)  # the first maximum: lowest action on ties
        nodes[active] += legal.sum(axis=1)
        moves[active, step] = action
        lengths[active] += 1
        cubes[active] = children[np.arange(len(active)), action]
        count[active] = puzzle.next_face_count(last[active], count[active], action)
        last[active] = action
        active = active[~solved_child[np.arange(len(active)), action]]


def greedy(
    cubes: np.ndarray,
    value_fn: ValueFn,
    last=None,
    count=None,
    max_moves: int = MAX_MOVES,
    chunk: int = GREEDY_CHUNK,
    puzzle: Puzzle | str | None = None,
) -> list[SolveResult]:
    """``greedy_batch`` as one ``SolveResult`` per cube (seconds: the batch's time shared evenly)."""
    start = time.perf_counter()
    moves, lengths, solved, nodes = greedy_batch(cubes, value_fn, last, count, max_moves, chunk, puzzle)
    share = (time.perf_counter() - start) / max(len(moves), 1)
    return [SolveResult(m[:k].tolist(), bool(s), int(c), share) for m, k, s, c in zip(moves, lengths, solved, nodes)]


# --------------------------------------------------------------------------- lockstep driver
#: A per-cube search written as a generator: it yields the states it needs evaluated (one
#: request per network call it would make), is sent back ``fn(states)`` for exactly those
#: states, and returns its ``SolveResult`` (``seconds`` filled in by the driver). One
#: implementation of each search's rule, run alone (``_run_one``) or many in lockstep.
Search = Generator[np.ndarray, np.ndarray, SolveResult]
#: ``clock()``: the seconds a search has spent so far, for its ``seconds`` budget.
Clock = Callable[[], float]
LOCKSTEP_CHUNK = 512  # cubes per lockstep group of beam / astar (bounds the joint network batch)
LOCKSTEP_STATES = 1 << 20  # beam: children of one group's beams at most (groups shrink for wide beams)
LOCKSTEP_NODES = 1 << 22  # astar: node budgets of one group at most (its graphs and heaps live together)


def _run_one(start: Callable[[Clock], Search], fn) -> SolveResult:
    """Run one search alone: each request straight to ``fn``; ``seconds`` is its wall time."""
    began = time.perf_counter()
    search = start(lambda: time.perf_counter() - began)
    try:
        request = next(search)
        while True:
            request = search.send(fn(request))
    except StopIteration as stop:
        result = stop.value
    result.seconds = time.perf_counter() - began
    return result


def _lockstep(start: Callable[[int, Clock], Search], n: int, fn, chunk: int) -> list[SolveResult]:
    """Run the searches of cubes ``0..n-1`` in lockstep groups of ``chunk``: each round, the
    requests of every unfinished search of the group go through one ``fn`` call, and each
    search gets back the rows of its own states. A search sees exactly the values it would
    see alone (``fn`` being a function of each position), so it takes the same steps.

    Time: a round's wall time is shared evenly among the searches that took part in it; a
    search's ``clock`` (its ``seconds`` budget) is the sum of its shares of the rounds done.
    The result's ``seconds`` is the group's wall time shared evenly among its cubes (as for
    ``greedy`` and ``mcts``), so ``sum(r.seconds)`` is the total.
    """
    results: list[SolveResult | None] = [None] * n
    for lo in range(0, n, chunk):
        size = min(chunk, n - lo)
        began = time.perf_counter()
        spent = np.zeros(size)
        live: dict[int, tuple[Search, np.ndarray]] = {}

        def advance(k: int, search: Search, reply) -> None:
            try:
                live[k] = (search, next(search) if reply is None else search.send(reply))
            except StopIteration as stop:
                results[lo + k] = stop.value

        tick = time.perf_counter()
        for k in range(size):
            advance(k, start(lo + k, functools.partial(spent.item, k)), None)
        spent += (time.perf_counter() - tick) / size
        while live:
            tick = time.perf_counter()
            keys = list(live)
            searches, requests = zip(*(live.pop(k) for k in keys))
            replies = np.asarray(fn(np.concatenate(requests)))
            bounds = np.cumsum([len(r) for r in requests])[:-1]
            for k, search, reply in zip(keys, searches, np.split(replies, bounds)):
                advance(k, search, reply)
            spent[keys] += (time.perf_counter() - tick) / len(keys)
        share = (time.perf_counter() - began) / size
        for k in range(size):
            results[lo + k].seconds = share
    return results


# --------------------------------------------------------------------------- beam search
def beam(
    cube: np.ndarray,
    value_fn: ValueFn | None = None,
    policy_fn: PolicyFn | None = None,
    last: int = NO_ACTION,
    count: int = 0,
    beam_width: int = 100,
    max_depth: int = MAX_MOVES,
    max_nodes: int = 200_000,
    rank: str = "value",
    seconds: float | None = None,
    puzzle: Puzzle | str | None = None,
    by_position: bool = False,
) -> SolveResult:
    """Beam search from one cube; stops at the first depth where a child is solved.

    ``rank="value"``: keep the ``beam_width`` children with the highest ``value_fn``;
    ``"policy"``: the highest cumulative log-softmax of ``policy_fn`` along the path (the
    policy is evaluated on the beam, its children need no evaluation). A state reached twice
    within one depth is kept once (its best-ranked copy); ties keep beam order, then the
    lowest action. Budgets: ``max_depth`` moves, ``max_nodes`` children generated (never
    exceeded: a depth that would exceed it is not started), ``seconds``. ``by_position``: states
    are "the same" when they are one position up to a whole-cube turn (``Puzzle.position_keys``;
    for a network with a canonical orientation, which cannot tell them apart), so the beam
    never spends two places on one position.
    ``beam_lockstep`` runs the same search for many cubes in lockstep.
    """
    fn = _beam_fn(rank, value_fn, policy_fn)
    puzzle = get_puzzle(puzzle)
    return _run_one(
        lambda clock: _beam_search(
            cube, last, count, beam_width, max_depth, max_nodes, rank, seconds, clock, puzzle, by_position
        ),
        fn,
    )


def beam_lockstep(
    cubes: np.ndarray,
    value_fn: ValueFn | None = None,
    policy_fn: PolicyFn | None = None,
    last=None,
    count=None,
    beam_width: int = 100,
    max_depth: int = MAX_MOVES,
    max_nodes: int = 200_000,
    rank: str = "value",
    seconds: float | None = None,
    chunk: int = LOCKSTEP_CHUNK,
    puzzle: Puzzle | str | None = None,
    by_position: bool = False,
) -> list[SolveResult]:
    """``beam`` from every cube, in lockstep groups of up to ``chunk`` cubes: per depth, the
    children (policy rank: the beams) of every unfinished cube go through one network call,
    then each cube keeps its own best ``beam_width``. Same moves, ``solved`` and ``nodes`` per
    cube as ``beam``; budgets are per cube (``seconds``: see ``_lockstep``)."""
    fn = _beam_fn(rank, value_fn, policy_fn)
    puzzle = get_puzzle(puzzle)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    last, count = _history(len(cubes), last, count)
    chunk = max(1, min(chunk, LOCKSTEP_STATES // (NUM_ACTIONS * beam_width)))

    def start(i: int, clock: Clock) -> Search:
        return _beam_search(
            cubes[i],
            int(last[i]),
            int(count[i]),
            beam_width,
            max_depth,
            max_nodes,
            rank,
            seconds,
            clock,
            puzzle,
            by_position,
        )

    return _lockstep(start, len(cubes), fn, chunk)


def _beam_fn(rank: str, value_fn, policy_fn):
    if rank not in BEAM_RANKS:
        raise ValueError(f"rank must be one of {BEAM_RANKS}, got {rank!r}")
    fn = value_fn if rank == "value" else policy_fn
    if fn is None:
        raise ValueError(f"beam with rank={rank!r} needs a {'value_fn' if rank == 'value' else 'policy_fn'}")
    return fn


def _beam_search(
    cube,
    last,
    count,
    beam_width,
    max_depth,
    max_nodes,
    rank,
    seconds,
    clock: Clock,
    puzzle: Puzzle | None = None,
    by_position: bool = False,
) -> Search:
    """The beam search of one cube (see ``beam``), as a ``Search``: it requests the values of
    each depth's new children (policy rank: the logits of the beam)."""
    puzzle = get_puzzle(puzzle)
    keys_of = puzzle.position_keys if by_position else puzzle.state_keys
    root = np.asarray(cube, dtype=np.int8).reshape(1, puzzle.num_stickers)
    if puzzle.is_solved(root)[0]:
        return SolveResult([], True, 0, 0.0)
    states, (lasts, counts) = root, _history(1, last, count)
    paths = np.zeros((1, 0), np.intp)  # [k, depth] moves from the root to each beam state
    cum = np.zeros(1)  # [k] cumulative log-probability (policy rank)
    expanded = keys_of(root)  # sorted keys of every state a beam has held
    nodes = 0
    for _ in range(max_depth):
        legal = puzzle.legal_action_mask(lasts, counts)  # [k, 12]
        if nodes + int(legal.sum()) > max_nodes or (seconds is not None and clock() > seconds):
            break
        parent, action = np.nonzero(legal)  # beam order, then action order
        children = puzzle.apply(states[parent], action)
        nodes += len(children)
        solved = np.flatnonzero(puzzle.is_solved(children))
        if len(solved):
            moves = paths[parent[solved[0]]].tolist() + [int(action[solved[0]])]
            return SolveResult(moves, verify(root, moves, puzzle), nodes, 0.0)
        keys = keys_of(children)
        if rank == "value":
            # A position's value does not depend on the path, so its first copy (beam order,
            # then action) stands for all, and only those are evaluated.
            _, first = np.unique(keys, return_index=True)
            order = np.sort(first)
            order = order[~_sorted_contains(expanded, keys[order])]
            score = np.full(len(children), -np.inf)
            if len(order):
                score[order] = np.asarray((yield children[order]), dtype=np.float64)
            order = order[np.argsort(-score[order], kind="stable")]
        else:
            score = cum[parent] + _log_softmax((yield states))[parent, action]
            order = np.argsort(-score, kind="stable")
            _, first = np.unique(keys[order], return_index=True)
            order = order[np.sort(first)]  # best copy of each state, best first
            order = order[~_sorted_contains(expanded, keys[order])]
        # A state some earlier beam held is dropped: its children were generated then, nearer
        # the root, so keeping it again only spends the beam on a cycle.
        keep = order[:beam_width]
        if not len(keep):
            break
        expanded = np.union1d(expanded, keys[keep])
        states, paths, cum = children[keep], np.column_stack([paths[parent[keep]], action[keep]]), score[keep]
        counts = puzzle.next_face_count(lasts[parent[keep]], counts[parent[keep]], action[keep])
        lasts = action[keep]
    return SolveResult([], False, nodes, 0.0)


def _sorted_contains(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``keys`` that occur in the sorted array ``sorted_keys`` (a vectorised set lookup)."""
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


# --------------------------------------------------------------------------- weighted A*
class _Graph:
    """Nodes of one search as growable arrays; ``index`` maps a state key to its node."""

    def __init__(self, capacity: int = 1024, num_stickers: int = NUM_STICKERS):
        self.size = 0
        self.state = np.zeros((capacity, num_stickers), np.int8)  # [cap, stickers]
        self.g = np.zeros(capacity, np.int64)  # [cap] best path cost found
        self.h = np.zeros(capacity)  # [cap] heuristic (moves)
        self.parent = np.full(capacity, -1, np.int64)  # [cap] node on the best path, -1 at the root
        self.action = np.full(capacity, NO_ACTION, np.intp)  # [cap] move from the parent
        self.count = np.zeros(capacity, np.intp)  # [cap] face count of that move
        self.closed_g = np.full(capacity, np.iinfo(np.int64).max)  # [cap] g when last expanded
        self.index: dict = {}  # key (an int, or a tuple of ints for a multi-part key) -> node

    def add(self, keys, state, g, h, parent, action, count) -> np.ndarray:
        ids = np.arange(self.size, self.size + len(keys))
        if self.size + len(keys) > len(self.g):  # double: amortised O(1) per node
            cap = max(2 * len(self.g), self.size + len(keys))
            for name in ("state", "g", "h", "parent", "action", "count", "closed_g"):
                old = getattr(self, name)
                new = np.resize(old, (cap,) + old.shape[1:])
                new[len(old) :] = np.iinfo(np.int64).max if name == "closed_g" else 0
                setattr(self, name, new)
        self.state[ids], self.g[ids], self.h[ids] = state, g, h
        self.parent[ids], self.action[ids], self.count[ids] = parent, action, count
        self.index.update(zip(keys.tolist(), ids.tolist()))
        self.size += len(keys)
        return ids

    def path(self, node: int) -> list[int]:
        moves = []
        while self.parent[node] >= 0:
            moves.append(int(self.action[node]))
            node = int(self.parent[node])
        return moves[::-1]


def astar(
    cube: np.ndarray,
    value_fn: ValueFn,
    last: int = NO_ACTION,
    count: int = 0,
    lam: float = 0.6,
    batch: int = 1,
    max_nodes: int = 200_000,
    seconds: float | None = None,
    puzzle: Puzzle | str | None = None,
) -> SolveResult:
    """DeepCubeA's batch weighted A* from one cube: ``f = lam * g + h``, ``h = value_as_moves`` (at least 0).

    Each step pops the ``batch`` open nodes of lowest ``f`` and expands them together (one
    ``value_fn`` call for all their new children). States are keyed exactly; a state reached
    again by a shorter path gets the new parent and is reopened. Solved children are goals,
    never expanded; the search stops when no open node has ``f`` below the best goal's
    ``lam * g`` (with ``batch = 1`` that is "stop when a goal is popped"; with larger batches it
    keeps ``lam = 1`` with an exact, consistent heuristic optimal). A goal found before the
    budget runs out is returned even if the proof of optimality was cut short.

    Defaults: ``lam = 0.6`` is DeepCubeA's (a weight below 1 trusts the network's estimate over
    the path length: faster, slightly longer solutions); ``batch = 1`` because the lockstep
    driver fills the network's batches with many cubes (DeepCubeA's batch of 10,000 nodes fills
    a GPU from one cube). Budgets:
    ``max_nodes`` children generated (never exceeded), ``seconds``.
    ``astar_lockstep`` runs the same search for many cubes in lockstep.
    """
    puzzle = get_puzzle(puzzle)
    return _run_one(
        lambda clock: _astar_search(cube, last, count, lam, batch, max_nodes, seconds, clock, puzzle), value_fn
    )


def astar_lockstep(
    cubes: np.ndarray,
    value_fn: ValueFn,
    last=None,
    count=None,
    lam: float = 0.6,
    batch: int = 1,
    max_nodes: int = 200_000,
    seconds: float | None = None,
    chunk: int = LOCKSTEP_CHUNK,
    puzzle: Puzzle | str | None = None,
) -> list[SolveResult]:
    """``astar`` from every cube, in lockstep groups: each step, every unfinished cube pops
    its ``batch`` best open nodes and all their new children go through one ``value_fn``
    call; each cube keeps its own graph, heap and budgets. Same moves, ``solved`` and
    ``nodes`` per cube as ``astar`` (``seconds``: see ``_lockstep``). A group holds at most
    ``chunk`` cubes and ``LOCKSTEP_NODES`` nodes of budget (the graphs live together)."""
    puzzle = get_puzzle(puzzle)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    last, count = _history(len(cubes), last, count)
    chunk = max(1, min(chunk, LOCKSTEP_NODES // max(max_nodes, 1)))

    def start(i: int, clock: Clock) -> Search:
        return _astar_search(cubes[i], int(last[i]), int(count[i]), lam, batch, max_nodes, seconds, clock, puzzle)

    return _lockstep(start, len(cubes), value_fn, chunk)


def _astar_search(
    cube, last, count, lam, batch, max_nodes, seconds, clock: Clock, puzzle: Puzzle | None = None
) -> Search:
    """The weighted A* of one cube (see ``astar``), as a ``Search``: it requests the values of
    each step's new unsolved children."""
    puzzle = get_puzzle(puzzle)
    root = np.asarray(cube, dtype=np.int8).reshape(1, puzzle.num_stickers)
    if puzzle.is_solved(root)[0]:
        return SolveResult([], True, 0, 0.0)
    last, count = _history(1, last, count)
    graph = _Graph(num_stickers=puzzle.num_stickers)  # a node's ``action`` is the move into it; the root's: its history
    graph.add(puzzle.state_keys(root), root, 0, 0.0, -1, last, count)
    tiebreak = itertools.count()
    # (f, -g, order, node, g): equal f pops the deeper node first (the usual A* tie-break: with an
    # exact heuristic every node on a shortest path has the same f, and this walks one of them
    # straight to the goal instead of expanding them all), then the first pushed.
    open_heap = [(0.0, 0, next(tiebreak), 0, 0)]
    goal, goal_g, nodes = -1, np.inf, 0
    while open_heap and (goal < 0 or open_heap[0][0] < round(lam * goal_g, F_DECIMALS)):
        if seconds is not None and clock() > seconds:
            break
        room = min(batch, (max_nodes - nodes) // NUM_ACTIONS)  # so the budget is never exceeded
        popped = []
        while open_heap and len(popped) < room:
            _, _, _, node, g = heapq.heappop(open_heap)
            if g == graph.g[node] and g < graph.closed_g[node]:  # skip stale and expanded entries
                graph.closed_g[node] = g
                popped.append(node)
            if goal >= 0 and open_heap and open_heap[0][0] >= round(lam * goal_g, F_DECIMALS):
                break
        if not popped:
            break
        nodes, goal, goal_g = yield from _expand(
            graph, np.array(popped), lam, open_heap, tiebreak, nodes, goal, goal_g, puzzle
        )
    if goal < 0:
        return SolveResult([], False, nodes, 0.0)
    moves = graph.path(goal)
    return SolveResult(moves, verify(root, moves, puzzle), nodes, 0.0)


def _expand(graph: _Graph, parents, lam, open_heap, tiebreak, nodes, goal, goal_g, puzzle: Puzzle):
    """Generate the legal children of ``parents``, add or improve their nodes, push them (a
    generator: it requests the values of the new unsolved children, if any)."""
    legal = puzzle.legal_action_mask(graph.action[parents], graph.count[parents])
    row, action = np.nonzero(legal)
    parent = parents[row]
    state = puzzle.apply(graph.state[parent], action)
    g = graph.g[parent] + 1
    nodes += len(state)
    keys = puzzle.state_keys(state)
    # One copy per state, the shortest path first (then the earliest parent and action).
    order = np.lexsort((np.arange(len(keys)), g, keys))
    first = order[np.unique(keys[order], return_index=True)[1]]
    first.sort()
    keys, state, g, parent, action = keys[first], state[first], g[first], parent[first], action[first]
    count = puzzle.next_face_count(graph.action[parent], graph.count[parent], action)
    known = np.fromiter((graph.index.get(k, -1) for k in keys.tolist()), dtype=np.int64, count=len(keys))
    better = np.flatnonzero(known >= 0)
    better = better[g[better] < graph.g[known[better]]]
    ids = known[better]
    graph.g[ids], graph.parent[ids], graph.action[ids], graph.count[ids] = (
        g[better],
        parent[better],
        action[better],
        count[better],
    )
    new = np.flatnonzero(known < 0)
    solved = puzzle.is_solved(state[new])
    h = np.zeros(len(new))
    if (~solved).any():
        h[~solved] = value_as_moves((yield state[new[~solved]]), puzzle.value_per_move, at_least=0.0)
    new_ids = graph.add(keys[new], state[new], g[new], h, parent[new], action[new], count[new])
    touched = np.concatenate([ids, new_ids])
    is_goal = puzzle.is_solved(graph.state[touched])
    for node in touched[is_goal].tolist():
        if graph.g[node] < goal_g:
            goal, goal_g = node, graph.g[node]
    # f is rounded so that float noise in h (1 - v is not exact in binary) cannot split ties
    # between equally good paths, which the tie-break and the stopping test rely on.
    f = np.round(lam * graph.g[touched] + graph.h[touched], F_DECIMALS)
    for node, f_node, g_node in zip(
        touched[~is_goal].tolist(), f[~is_goal].tolist(), graph.g[touched[~is_goal]].tolist()
    ):
        heapq.heappush(open_heap, (f_node, -g_node, next(tiebreak), node, g_node))
    return nodes, goal, goal_g


# --------------------------------------------------------------------------- seed 003's best-first search
#: The seed's action order ``L L' R R' F F' B B' U U' D D'`` as this project's action indices:
#: children are generated (and ties broken) in the seed's order.
SEED_ACTION_ORDER = np.array([6, 7, 2, 3, 4, 5, 8, 9, 0, 1, 10, 11], dtype=np.intp)
SEED_STEP_PENALTY = 4  # the seed's heuristic subtracts 4 per move taken


@functools.cache
def _face_pairs(size: int) -> np.ndarray:
    return face_adjacent_pairs(size)


def seed_heuristic(cubes: np.ndarray, steps, puzzle: Puzzle | str | None = None) -> np.ndarray:
    """Seed 003's score (higher is better): pairs of edge-adjacent same-colour stickers on
    each face (24 when a 2x2 is solved, 72 for a 3x3, the seed's cube) minus ``4 * steps`` taken."""
    puzzle = get_puzzle(puzzle)
    pairs = _face_pairs(puzzle.size)
    cubes = np.asarray(cubes).reshape(-1, puzzle.num_stickers)
    same = (cubes[:, pairs[:, 0]] == cubes[:, pairs[:, 1]]).sum(axis=1)
    return same - SEED_STEP_PENALTY * np.asarray(steps)


def bestfirst(
    cube: np.ndarray,
    last: int = NO_ACTION,
    count: int = 0,
    max_nodes: int = 200_000,
    seconds: float | None = None,
    puzzle: Puzzle | str | None = None,
) -> SolveResult:
    """Seed 003's ``solve`` (written for the 3x3; the 2x2 by default): greedy best-first search
    on ``seed_heuristic``.

    Faithful to the seed: the frontier (a ``SortedSet`` there) pops the node of highest score,
    and among equal scores the one inserted last (``SortedSet.pop()`` takes the rightmost, new
    equal elements go right of old ones); a node's children are made in the seed's action
    order and the search returns as soon as one of them is solved (before the explored check);
    a state already explored is never added again, even by a shorter path (no reopening).
    Beyond the seed: the env's mask is applied, which on a fresh cube never changes the moves
    found (the masked children are the grandparent or its other child, both already
    explored), only the node count; and budgets: ``max_nodes`` children generated (never
    exceeded), ``seconds``.
    """
    start = time.perf_counter()
    puzzle = get_puzzle(puzzle)
    root = np.asarray(cube, dtype=np.int8).reshape(puzzle.num_stickers)
    if puzzle.is_solved(root[None])[0]:
        return SolveResult([], True, 0, time.perf_counter() - start)
    (root_last,), (root_count,) = _history(1, last, count)
    states, steps, parents, actions, lasts, counts = [root], [0], [-1], [NO_ACTION], [root_last], [root_count]
    explored = set(puzzle.state_keys(root).tolist())
    inserted = itertools.count()
    # min-heap: highest score, newest first
    frontier = [(-int(seed_heuristic(root, 0, puzzle)[0]), -next(inserted), 0)]
    nodes = 0
    while frontier:
        node = heapq.heappop(frontier)[2]
        legal = puzzle.legal_action_mask(lasts[node], counts[node])[SEED_ACTION_ORDER]
        acts = SEED_ACTION_ORDER[legal]
        if nodes + len(acts) > max_nodes or (seconds is not None and time.perf_counter() - start > seconds):
            break
        children = states[node][puzzle.move_perms[acts]]  # [k, stickers]
        nodes += len(acts)
        solved = np.flatnonzero(puzzle.is_solved(children))
        if len(solved):
            moves = _backtrack(parents, actions, node) + [int(acts[solved[0]])]
            return SolveResult(moves, verify(root, moves, puzzle), nodes, time.perf_counter() - start)
        scores = seed_heuristic(children, steps[node] + 1, puzzle).tolist()
        for child, key, a, score in zip(children, puzzle.state_keys(children).tolist(), acts.tolist(), scores):
            if key in explored:
                continue
            explored.add(key)
            states.append(child)
            steps.append(steps[node] + 1)
            parents.append(node)
            actions.append(a)
            counts.append(int(puzzle.next_face_count(lasts[node], counts[node], a)))
            lasts.append(a)
            heapq.heappush(frontier, (-score, -next(inserted), len(states) - 1))
    return SolveResult([], False, nodes, time.perf_counter() - start)


def _backtrack(parents: list[int], actions: list[int], node: int) -> list[int]:
    moves = []
    while parents[node] >= 0:
        moves.append(actions[node])
        node = parents[node]
    return moves[::-1]


# --------------------------------------------------------------------------- MCTS (the original)
def mcts(
    cubes: np.ndarray,
    model: torch.nn.Module | None = None,
    value_fn: ValueFn | None = None,
    policy_fn: PolicyFn | None = None,
    sims: int = 1000,
    max_moves: int = MAX_MOVES,
    c_puct: float = C_PUCT,
    seed: int = 0,
    device=None,
) -> list[SolveResult]:
    """Greedy MCTS episodes from every cube in lockstep, exactly as ``evaluate.py`` plays them.

    With a ``model`` this is ``play_episodes`` with evaluate.py's arguments (same moves);
    without one, ``policy_fn``/``value_fn`` feed the search instead (priors = softmax of the
    logits). Cubes start with a fresh move history, as in the evaluation. ``nodes`` = the
    simulations run for that cube (``sims`` per move searched).
    """
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, NUM_STICKERS)
    search = None
    if model is None:
        if value_fn is None or policy_fn is None:
            raise ValueError("mcts needs a model, or both a value_fn and a policy_fn")

        def evaluator(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            priors = np.exp(_log_softmax(policy_fn(states))).astype(np.float32)
            return priors, np.asarray(value_fn(states), dtype=np.float32)

        search = MCTS(None, c_puct=c_puct, num_simulations=sims, evaluator=evaluator)
    if model is not None and device is None:
        device = next(model.parameters()).device
    run = play_greedy(model, cubes, sims, max_moves, device=device, seed=seed, c_puct=c_puct, mcts=search)
    share = run.seconds / max(len(cubes), 1)
    return [
        SolveResult(list(moves), verify(cube, moves), len(moves) * sims, share)
        for cube, moves in zip(cubes, run.actions)
    ]


# --------------------------------------------------------------------------- registry and entry point
def _run_mcts(cubes, last, count, opts: SolverOptions, model, value_fn, policy_fn, device, puzzle=None):
    if last is not None and np.any(np.asarray(last) != NO_ACTION):
        raise ValueError("the mcts solver starts every cube with a fresh move history (as the evaluation does)")
    return mcts(cubes, model, value_fn, policy_fn, opts.sims, opts.max_moves, opts.c_puct, opts.seed, device)


def _run_greedy(cubes, last, count, opts, model, value_fn, policy_fn, device, puzzle=None) -> list[SolveResult]:
    return greedy(cubes, _need(value_fn, "greedy", "value_fn"), last, count, opts.max_moves, puzzle=puzzle)


def _run_beam(cubes, last, count, opts, model, value_fn, policy_fn, device, puzzle=None) -> list[SolveResult]:
    return beam_lockstep(
        cubes,
        value_fn,
        policy_fn,
        last,
        count,
        opts.beam_width,
        opts.max_moves,
        opts.max_nodes,
        opts.beam_rank,
        opts.seconds,
        puzzle=puzzle,
        by_position=getattr(value_fn if opts.beam_rank == "value" else policy_fn, "reads_positions", False),
    )


def _run_astar(cubes, last, count, opts, model, value_fn, policy_fn, device, puzzle=None) -> list[SolveResult]:
    value_fn = _need(value_fn, "astar", "value_fn")
    return astar_lockstep(
        cubes, value_fn, last, count, opts.astar_lambda, opts.astar_batch, opts.max_nodes, opts.seconds, puzzle=puzzle
    )


def _run_bestfirst(cubes, last, count, opts, model, value_fn, policy_fn, device, puzzle=None) -> list[SolveResult]:
    last, count = _history(len(cubes), last, count)
    return [bestfirst(c, int(a), int(k), opts.max_nodes, opts.seconds, puzzle) for c, a, k in zip(cubes, last, count)]


def _run_gumbel(cubes, last, count, opts, model, value_fn, policy_fn, device, puzzle=None) -> list[SolveResult]:
    from Gumbel_MCTS import play_gumbel_episodes

    if last is not None and np.any(np.asarray(last) != NO_ACTION):
        raise ValueError("the gumbel solver starts every cube with a fresh move history (as the evaluation does)")
    if value_fn is not None or policy_fn is not None or model is None:
        # Functions given (or no model): they feed the search, priors = softmax of the logits.
        value_fn = _need(value_fn, "gumbel", "value_fn")
        policy_fn = _need(policy_fn, "gumbel", "policy_fn")

        def searcher(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            priors = np.exp(_log_softmax(policy_fn(states))).astype(np.float32)
            return priors, np.asarray(value_fn(states), dtype=np.float32)

    else:
        searcher = model
        device = device if device is not None else next(model.parameters()).device
    was_training = model.training if model is not None else False
    if model is not None:
        model.eval()
    try:
        run = play_gumbel_episodes(
            searcher,
            cubes,
            opts.sims,
            opts.max_moves,
            np.random.default_rng(opts.seed),
            max_considered=opts.max_considered,
            gumbel_scale=0.0,
            device=device,
        )
    finally:
        if model is not None:
            model.train(was_training)
    share = run.seconds / max(len(cubes), 1)
    return [
        SolveResult(list(moves), verify(cube, moves), len(moves) * opts.sims, share)
        for cube, moves in zip(cubes, run.actions)
    ]


def _need(fn, solver: str, what: str):
    if fn is None:
        raise ValueError(f"the {solver} solver needs a model or a {what}")
    return fn


#: ``name -> run(cubes, last, count, options, model, value_fn, policy_fn, device, puzzle)``; use ``solve_cubes``.
SOLVERS = {
    "mcts": _run_mcts,
    "greedy": _run_greedy,
    "beam": _run_beam,
    "astar": _run_astar,
    "bestfirst": _run_bestfirst,
    "gumbel": _run_gumbel,
}


def solve_cubes(
    name: str,
    cubes: np.ndarray,
    *,
    model: torch.nn.Module | None = None,
    value_fn: ValueFn | None = None,
    policy_fn: PolicyFn | None = None,
    last=None,
    count=None,
    options: SolverOptions | None = None,
    device=None,
    puzzle: Puzzle | str | None = None,
    **overrides,
) -> list[SolveResult]:
    """Solve ``cubes`` ``(n, stickers)`` (or one cube) of ``puzzle`` (default the 2x2) with solver
    ``name``: one ``SolveResult`` each. ``mcts`` and ``gumbel`` take the 2x2 only (ValueError).

    ``model``: a policy-value network; its ``network_fns`` fill in whichever of ``value_fn`` /
    ``policy_fn`` is not given (``mcts`` uses the model itself, as the evaluation does, and
    so does ``gumbel`` unless functions are given).
    ``last``/``count``: per-cube move history (scalars broadcast). ``options`` plus keyword
    ``overrides`` of its fields (``solve_cubes("astar", c, value_fn=f, astar_lambda=1.0)``).
    """
    if name not in SOLVERS:
        raise ValueError(f"unknown solver {name!r}; choose one of {', '.join(SOLVER_NAMES)}")
    puzzle = get_puzzle(puzzle)
    problem = solver_puzzle_problem(name, puzzle)
    if problem:
        raise ValueError(problem)
    opts = dataclasses.replace(options or SolverOptions(), **overrides)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    if model is not None and name not in TWO_BY_TWO_SOLVERS:
        net_value, net_policy = network_fns(model, device, puzzle=puzzle)
        value_fn = net_value if value_fn is None else value_fn
        policy_fn = net_policy if policy_fn is None else policy_fn
    if value_fn is not None and name in VALUE_SEARCHES:
        value_fn = evaluate_once(value_fn, puzzle, getattr(value_fn, "reads_positions", False))
    return SOLVERS[name](cubes, last, count, opts, model, value_fn, policy_fn, device, puzzle=puzzle)


def solver_puzzle_problem(name: str, puzzle: Puzzle | str | None = None) -> str | None:
    """Why solver ``name`` cannot solve ``puzzle`` (one sentence for the user), or None."""
    puzzle = get_puzzle(puzzle)
    if name in TWO_BY_TWO_SOLVERS and puzzle.name != "2x2":
        *others, last = [n for n in SOLVER_NAMES if n not in TWO_BY_TWO_SOLVERS]
        return (
            f"--solver {name} searches the 2x2 only so far; "
            f"solve the {puzzle.name} with --solver {', '.join(others)} or {last}"
        )
    return None


# --------------------------------------------------------------------------- command line
_nodes = Cli.int_in(1, 100_000_000, "states generated per cube")
_beam_width = Cli.int_in(1, 10_000_000, "states kept per depth")
_astar_batch = Cli.int_in(1, 10_000_000, "open nodes expanded per step")


def add_solver_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Add ``--solver`` and its budgets to a script's parser (``--sims``, ``--max-steps``,
    ``--c-puct`` and ``--seed`` stay the script's own flags; ``options_from_args`` reads them).
    A budget flag not given is absent from the parsed arguments, and ``--solver`` not given is
    None: ``resolve_solver(args)`` fills in the puzzle's default solver and budgets."""
    d = SolverOptions()
    g = parser.add_argument_group("solver")
    g.add_argument(
        "--solver",
        choices=SOLVER_NAMES,
        default=None,
        help="how cubes are solved: mcts (the original), greedy (value, one move ahead), beam, "
        "astar (DeepCubeA), bestfirst (seed 003, no network), gumbel (Gumbel AlphaZero root search, --sims) "
        f"(default: the puzzle's: {_puzzle_defaults_text()})",
    )
    g.add_argument(
        "--beam-width",
        type=_beam_width,
        default=argparse.SUPPRESS,
        help=f"states kept per depth by --solver beam (default: {d.beam_width}; see --solver)",
    )
    g.add_argument(
        "--beam-rank",
        choices=BEAM_RANKS,
        default=argparse.SUPPRESS,
        help="beam ranks by the value, or by cumulative policy log-probability (networks without a value) "
        f"(default: {d.beam_rank})",
    )
    g.add_argument(
        "--astar-batch",
        type=_astar_batch,
        default=argparse.SUPPRESS,
        help=f"open nodes expanded per step by --solver astar (default: {d.astar_batch})",
    )
    g.add_argument(
        "--astar-lambda",
        type=Cli.fraction,
        default=argparse.SUPPRESS,
        help="weight of the path length in f = lambda*g + h (1: optimal with an exact value) "
        f"(default: {d.astar_lambda})",
    )
    g.add_argument(
        "--max-nodes",
        type=_nodes,
        default=argparse.SUPPRESS,
        help=f"states generated per cube by beam, astar and bestfirst before giving up (default: {d.max_nodes:,}; "
        "see --solver)",
    )
    g.add_argument(
        "--time-limit",
        type=Cli.positive_float,
        default=argparse.SUPPRESS,
        help="seconds per cube for beam, astar and bestfirst (default: no limit; see --solver)",
    )
    return g


def _puzzle_defaults_text() -> str:
    """``mcts for the 2x2, beam (beam_width=1000, ...) for the 3x3``: each puzzle's default solver."""
    parts = []
    for puzzle in PUZZLES.values():
        budgets = ", ".join(f"{k}={v}" for k, v in puzzle.default_solver_options.items())
        parts.append(f"{puzzle.default_solver}{f' ({budgets})' if budgets else ''} for the {puzzle.name}")
    return ", ".join(parts)


#: ``SolverOptions`` field -> the attribute of the flag that sets it, where the two names differ.
_FLAG_OF_FIELD = {"max_moves": "max_steps", "seconds": "time_limit"}
#: The ``SolverOptions`` fields a script's flags set (``add_solver_arguments`` and the script's own).
_FIELDS_WITH_FLAGS = (
    "max_moves",
    "max_nodes",
    "beam_width",
    "beam_rank",
    "astar_batch",
    "astar_lambda",
    "sims",
    "c_puct",
    "seconds",
    "seed",
)


def resolve_solver(args: argparse.Namespace) -> None:
    """Without ``--solver``: the puzzle's default solver (``Puzzle.default_solver``; the 2x2's is
    mcts, as always) and, for every budget flag not given, its budget
    (``Puzzle.default_solver_options``). Changes ``args`` in place; call it after parsing."""
    if args.solver is not None:
        return
    puzzle = get_puzzle(getattr(args, "puzzle", None))
    args.solver = puzzle.default_solver
    for name, value in puzzle.default_solver_options.items():
        flag = _FLAG_OF_FIELD.get(name, name)
        if not hasattr(args, flag):
            setattr(args, flag, value)


def options_from_args(args: argparse.Namespace) -> SolverOptions:
    """``SolverOptions`` from parsed flags; flags a script does not have, or were not given,
    keep their defaults."""
    d = SolverOptions()
    return SolverOptions(**{f: getattr(args, _FLAG_OF_FIELD.get(f, f), getattr(d, f)) for f in _FIELDS_WITH_FLAGS})
