"""Solving given cubes with a network or a heuristic: one result shape, six interchangeable solvers.

Solvers (``SOLVERS``, chosen by name with ``solve_cubes`` or ``--solver``):

* ``mcts`` (default, the original): greedy MCTS episodes, exactly as ``evaluate.py`` plays them
  (``Self_Play.play_greedy``, argmax of the visits each move). ``nodes`` = simulations run.
* ``greedy``: the network alone. Each move, the value of every legal child; play the best
  (a solved child always; lowest action on ties). Batched over all cubes, chunked.
* ``beam``, ``astar``, ``bestfirst``: the tree searches of ``Tree_Searches`` (beam search on the
  value or the policy, DeepCubeA's batch weighted A*, seed 003's best-first search without a
  network), many cubes in lockstep.
* ``gumbel``: Gumbel AlphaZero root search (``Gumbel_Self_Play.play_gumbel_episodes``), played
  greedily (``gumbel_scale`` 0: the Sequential Halving winner each move, deterministic),
  ``sims`` simulations per move, all cubes in lockstep. ``nodes`` = simulations run.

What a solver is, is data: its ``SolverSpec`` in ``SOLVERS`` says which options it reads, whether
it needs a network, whether it reads the value as a function of each cube alone, and whether it
searches with the model itself through the game interface (``mcts``, ``gumbel``: any game of
``Games``, so any puzzle). No solver asks which cube it has.

Result: every solver returns one ``SolveResult(moves, solved, nodes, seconds)`` per cube.
``solved`` is only True when replaying ``moves`` from the start cube solves it (``verify``):
a solver's claim is never trusted, and a budget that runs out is "not solved". ``nodes``
counts the states a solver generated (children made, each evaluated or checked once), or
MCTS simulations. ``seconds`` is wall-clock time; every network solver advances many cubes
in lockstep (one network call per step for all of them), so it is the batch's time divided
evenly among its cubes, and ``sum(r.seconds)`` is always the total (``bestfirst``, one cube
at a time: each cube's own time).

Puzzles: every solver takes ``puzzle`` (a ``Puzzles.Puzzle`` or its name; default the 2x2) and
reads from it the stickers, moves, solved test, encoding and state keys. A 3x3 state key is
exact too, two int64 fields (its 48 moving stickers do not fit one); the searches only sort,
compare and hash keys, so both kinds work alike. The scripts' own MCTS paths (evaluate.py's
lockstep batch, test.py's and the GUI's move-by-move search) play the puzzle through the same game
interface, so every solver runs on every puzzle in every script.

Functions instead of a model, the value scale and move histories: see ``Solver_Base``. Every
solver plays only moves the env's mask allows (``legal_action_mask``), so its solutions can be
stepped in the env.

Command line: ``add_solver_arguments(parser)`` adds the flags, ``resolve_solver(args)`` fills in
the puzzle's default solver when ``--solver`` is not given, ``options_from_args(args)`` turns
them into ``SolverOptions``.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from cube.Cube_Model import NO_ACTION, SYMMETRY_COUNT
from cube.End_Table import MAX_END_RADIUS, end_table
from cube.Puzzles import C_PUCT, PUZZLES, Puzzle, get_puzzle
from cube.Solver_Anytime import solve_anytime
from cube.Solver_Base import (
    PolicyFn,
    SolveResult,
    ValueFn,
    check_network,
    evaluate_once,
    log_softmax,
    network_fns,
    start_history,
    verify,
    verify_batch,
)
from cube.Solver_Views import MAX_VIEWS, solve_from_views, view_count_limit
from cube.Tree_Searches import BEAM_RANKS, astar_lockstep, beam_lockstep, beam_widening, bestfirst
from engine import Precision
from engine.Gumbel_Self_Play import play_gumbel_episodes
from engine.Value_Scale import greedy_choice
from MCTS_Core import MCTS
from Rubik2x2Env import MAX_MOVES
from run import Cli
from Self_Play import EpisodeResults, play_greedy

GREEDY_CHUNK = 1 << 16  # cubes per lockstep greedy batch: bounds the (chunk, A, stickers) children


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
    # Beam: double the width from beam_width until the time limit, keep the shortest (--beam-widen)
    beam_widen: bool = False
    # Beam: finish exactly from any state within this many moves of solved (End_Table; 0: off) (--ends)
    ends: int = 0
    # Beam: first a cheap round of this width, then the rest with the budgets left (Solver_Anytime; 0: off)
    # (--first-width), from this many views (--first-views)
    first_width: int = 0
    first_views: int = 1
    # Anytime beam: the second round as wide as the first round's speed predicts to end within this many seconds
    # a cube, never narrower than beam_width (Solver_Anytime.sized_width; None or 0: off) (--target-seconds)
    target_seconds: float | None = None
    # Open nodes each cube expands per A* step (--astar-batch): 1, since the lockstep driver fills the
    # network batch with many cubes (measured: docs/design_notes.md, "--astar-batch")
    astar_batch: int = 1
    astar_lambda: float = 0.6  # weight of the path cost g in f = lambda * g + h (--astar-lambda)
    sims: int = 1000  # MCTS simulations per move (--sims)
    c_puct: float = C_PUCT  # MCTS exploration constant (--c-puct)
    seconds: float | None = None  # time limit per cube for beam, astar, bestfirst (--time-limit)
    seed: int = 0  # MCTS's generator for all-zero visit rows, as evaluate.py (--seed)
    max_considered: int = 16  # actions Gumbel's Sequential Halving starts from at the root
    # The network reads each cube under this many of its 48 symmetries and averages (--symmetries)
    symmetries: int = 1
    # Solve each cube from this many views (disguises and its inverse), keep the shortest (--views)
    views: int = 1
    # The network's matrix products in float32 or bfloat16 (Precision.py; --precision)
    precision: str = "fp32"


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
    last, count = start_history(n, last, count)
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
        children = cubes[active][:, puzzle.move_perms]  # [k, A, stickers]
        legal = puzzle.legal_action_mask(last[active], count[active])  # [k, A]
        solved_child = np.zeros(legal.shape, bool)
        # Only a cube one quarter turn from solved can have a solved child, and such a cube
        # shows at least two one-colour faces (the turned one and its opposite): checking the
        # children of those few is 12 times cheaper than checking every child.
        near = puzzle.uniform_faces(cubes[active]) >= 2
        if near.any():
            solved_child[near] = puzzle.is_solved(children[near].reshape(-1, puzzle.num_stickers)).reshape(
                -1, puzzle.num_actions
            )
        solved_child &= legal
        todo = legal & ~solved_child
        score = np.full(legal.shape, -np.inf)
        score[todo] = value_fn(children[todo])
        # A solved child is always played: the network's value of a solved cube is not
        # trusted (it was never a training target), and 1.0 may tie with other children.
        score[solved_child] = np.inf
        action = greedy_choice(score)  # near-equal values: the lowest action (Value_Scale.TIE_TOLERANCE)
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


# --------------------------------------------------------------------------- the game searches: MCTS and Gumbel
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
    puzzle: Puzzle | str | None = None,
) -> list[SolveResult]:
    """Greedy MCTS episodes from every cube in lockstep, exactly as ``evaluate.py`` plays them.

    With a ``model`` this is ``play_episodes`` with evaluate.py's arguments (same moves);
    without one, ``policy_fn``/``value_fn`` feed the search instead (priors = softmax of the
    logits). The search plays ``puzzle`` (default the 2x2) through its game interface. Cubes
    start with a fresh move history, as in the evaluation. ``nodes`` = the simulations run for
    that cube (``sims`` per move searched).
    """
    puzzle = get_puzzle(puzzle)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    evaluator = None
    if model is None:
        if value_fn is None or policy_fn is None:
            raise ValueError("mcts needs a model, or both a value_fn and a policy_fn")
        evaluator = _functions_evaluator(value_fn, policy_fn)
    elif device is None:
        device = next(model.parameters()).device
    search = MCTS(model, c_puct=c_puct, num_simulations=sims, device=device, evaluator=evaluator, game=puzzle)
    run = play_greedy(model, cubes, sims, max_moves, device=device, seed=seed, c_puct=c_puct, mcts=search)
    return _episode_results(cubes, run.actions, sims, run.seconds, puzzle)


def gumbel(
    cubes: np.ndarray,
    model: torch.nn.Module | None,
    value_fn: ValueFn | None,
    policy_fn: PolicyFn | None,
    opts: SolverOptions,
    device=None,
    puzzle: Puzzle | str | None = None,
) -> list[SolveResult]:
    """Greedy Gumbel episodes (``gumbel_scale`` 0) from every cube in lockstep, ``opts.sims``
    simulations per move. Given functions (or no model) feed the search (priors = softmax of the
    logits); otherwise the model does, in eval mode meanwhile. ``nodes`` = simulations run."""
    puzzle = get_puzzle(puzzle)
    if value_fn is not None or policy_fn is not None or model is None:
        searcher = _functions_evaluator(_need(value_fn, "gumbel", "value_fn"), _need(policy_fn, "gumbel", "policy_fn"))
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
            game=puzzle,
        )
    finally:
        if model is not None:
            model.train(was_training)
    return _episode_results(cubes, run.actions, opts.sims, run.seconds, puzzle)


def _functions_evaluator(value_fn: ValueFn, policy_fn: PolicyFn) -> Callable:
    """A search's evaluator from functions: ``states -> (priors (n, A) float32, values (n,) float32)``,
    the priors the softmax of ``policy_fn``'s logits."""

    def evaluator(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        priors = np.exp(log_softmax(policy_fn(states))).astype(np.float32)
        return priors, np.asarray(value_fn(states), dtype=np.float32)

    return evaluator


def _episode_results(cubes, actions, sims: int, seconds: float, puzzle: Puzzle) -> list[SolveResult]:
    """One ``SolveResult`` per episode of a lockstep search (``sims`` per move, the batch's time shared)."""
    share = seconds / max(len(cubes), 1)
    return [
        SolveResult(list(moves), verify(cube, moves, puzzle), len(moves) * sims, share)
        for cube, moves in zip(cubes, actions)
    ]


# --------------------------------------------------------------------------- registry and entry point
@dataclass(frozen=True)
class Solving:
    """What every solver of one ``solve_cubes`` call reads besides its cubes and options: the network
    (a model, or its value and policy functions), where it runs, and the puzzle."""

    model: torch.nn.Module | None
    value_fn: ValueFn | None
    policy_fn: PolicyFn | None
    device: object
    puzzle: Puzzle


def _run_mcts(cubes, last, count, opts: SolverOptions, s: Solving) -> list[SolveResult]:
    return mcts(
        cubes, s.model, s.value_fn, s.policy_fn, opts.sims, opts.max_moves, opts.c_puct, opts.seed, s.device, s.puzzle
    )


def _run_greedy(cubes, last, count, opts: SolverOptions, s: Solving) -> list[SolveResult]:
    return greedy(cubes, _need(s.value_fn, "greedy", "value_fn"), last, count, opts.max_moves, puzzle=s.puzzle)


def _run_beam(cubes, last, count, opts: SolverOptions, s: Solving, siblings=None) -> list[SolveResult]:
    value_fn, policy_fn, puzzle = s.value_fn, s.policy_fn, s.puzzle
    by_position = getattr(value_fn if opts.beam_rank == "value" else policy_fn, "reads_positions", False)
    budgets = (opts.beam_width, opts.max_moves, opts.max_nodes, opts.beam_rank, opts.seconds)
    ends = end_table(puzzle, opts.ends) if opts.ends else None
    if not opts.beam_widen:
        return beam_lockstep(
            cubes, value_fn, policy_fn, last, count, *budgets, puzzle=puzzle, by_position=by_position,
            siblings=siblings, ends=ends,
        )  # fmt: skip
    if opts.seconds is None:
        raise ValueError("--beam-widen needs --time-limit: it widens the beam until the limit")
    last, count = start_history(len(cubes), last, count)
    return [
        beam_widening(c, value_fn, policy_fn, int(a), int(k), *budgets, puzzle, by_position, ends=ends)
        for c, a, k in zip(cubes, last, count)
    ]


def _run_astar(cubes, last, count, opts: SolverOptions, s: Solving) -> list[SolveResult]:
    value_fn = _need(s.value_fn, "astar", "value_fn")
    return astar_lockstep(
        cubes, value_fn, last, count, opts.astar_lambda, opts.astar_batch, opts.max_nodes, opts.seconds,
        puzzle=s.puzzle,
    )  # fmt: skip


def _run_bestfirst(cubes, last, count, opts: SolverOptions, s: Solving) -> list[SolveResult]:
    last, count = start_history(len(cubes), last, count)
    return [bestfirst(c, int(a), int(k), opts.max_nodes, opts.seconds, s.puzzle) for c, a, k in zip(cubes, last, count)]


def _run_gumbel(cubes, last, count, opts: SolverOptions, s: Solving) -> list[SolveResult]:
    return gumbel(cubes, s.model, s.value_fn, s.policy_fn, opts, s.device, s.puzzle)


def _need(fn, solver: str, what: str):
    if fn is None:
        raise ValueError(f"the {solver} solver needs a model or a {what}")
    return fn


@dataclass(frozen=True)
class SolverSpec:
    """What ``solve_cubes`` and the scripts know of one solver: its capabilities as data."""

    #: ``run(cubes, last, count, options, solving: Solving) -> [SolveResult]``
    run: Callable[..., list[SolveResult]]
    #: The ``SolverOptions`` fields it reads (what a result file records as its options).
    fields: tuple[str, ...]
    #: It reads a network (a model, or ``value_fn``/``policy_fn``); ``bestfirst`` does not.
    network: bool = True
    #: It reads ``value_fn`` as a function of each cube alone, so ``solve_cubes`` may hand it
    #: ``evaluate_once(value_fn)``: the same values, fewer network rows.
    value_search: bool = False
    #: It searches with the model itself through the game interface (``MCTS_Core``, ``Gumbel_MCTS``),
    #: every cube from a fresh move history, as the evaluation plays it.
    game_search: bool = False
    #: Its ``run`` takes ``siblings`` (``Solver_Views.solve_from_views``) and stops a cube's other views
    #: once one has solved it: the beam, whose views all advance a depth a round.
    stops_views: bool = False


#: ``name -> SolverSpec``; solve with ``solve_cubes``.
SOLVERS = {
    "mcts": SolverSpec(_run_mcts, ("sims", "max_moves", "c_puct"), game_search=True),
    "greedy": SolverSpec(_run_greedy, ("max_moves", "symmetries", "views", "precision"), value_search=True),
    "beam": SolverSpec(
        _run_beam,
        (
            "beam_width",
            "beam_rank",
            "beam_widen",
            "ends",
            "first_width",
            "first_views",
            "target_seconds",
            "symmetries",
            "views",
            "precision",
            "max_moves",
            "max_nodes",
            "seconds",
        ),
        value_search=True,
        stops_views=True,
    ),
    "astar": SolverSpec(
        _run_astar,
        ("astar_lambda", "astar_batch", "symmetries", "views", "precision", "max_nodes", "seconds"),
        value_search=True,
    ),
    "bestfirst": SolverSpec(_run_bestfirst, ("max_nodes", "seconds"), network=False),
    "gumbel": SolverSpec(_run_gumbel, ("sims", "max_moves", "max_considered"), game_search=True),
}
SOLVER_NAMES = tuple(SOLVERS)
#: The solvers that read a network (``bestfirst`` runs on its hand heuristic alone).
NETWORK_SOLVERS = frozenset(name for name, spec in SOLVERS.items() if spec.network)
#: The ``SolverOptions`` fields each solver reads (what a result file records as its options).
SOLVER_FIELDS = {name: spec.fields for name, spec in SOLVERS.items()}


def solver_settings(name: str, options: SolverOptions | None = None) -> dict:
    """The options solver ``name`` reads, as a plain dict (for result files)."""
    opts = options or SolverOptions()
    return {f: getattr(opts, f) for f in SOLVER_FIELDS[name]}


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
    ``name``: one ``SolveResult`` each.

    ``model``: a policy-value network; its ``network_fns`` fill in whichever of ``value_fn`` /
    ``policy_fn`` is not given (``mcts`` uses the model itself, as the evaluation does, and
    so does ``gumbel`` unless functions are given). A network of another puzzle is refused
    (ValueError). ``last``/``count``: per-cube move history (scalars broadcast; ``mcts`` and
    ``gumbel`` take fresh histories only). ``options`` plus keyword ``overrides`` of its fields
    (``solve_cubes("astar", c, value_fn=f, astar_lambda=1.0)``). The beam with ``first_width`` solves each
    cube in two rounds (``Solver_Anytime``): a cheap one, then the search ``options`` set.
    """
    if name not in SOLVERS:
        raise ValueError(f"unknown solver {name!r}; choose one of {', '.join(SOLVER_NAMES)}")
    spec, puzzle = SOLVERS[name], get_puzzle(puzzle)
    opts = dataclasses.replace(options or SolverOptions(), **overrides)
    cubes = np.asarray(cubes, dtype=np.int8).reshape(-1, puzzle.num_stickers)
    if spec.game_search:
        if last is not None and np.any(np.asarray(last) != NO_ACTION):
            raise ValueError(f"the {name} solver starts every cube with a fresh move history (as the evaluation does)")
        if model is not None:
            check_network(model, puzzle)
    elif model is not None:
        net_value, net_policy = network_fns(
            model, device, puzzle=puzzle, symmetries=opts.symmetries, precision=opts.precision
        )
        value_fn = net_value if value_fn is None else value_fn
        policy_fn = net_policy if policy_fn is None else policy_fn
    if value_fn is not None and spec.value_search:
        value_fn = evaluate_once(value_fn, puzzle, getattr(value_fn, "reads_positions", False))
    solving = Solving(model, value_fn, policy_fn, device, puzzle)
    if opts.views > 1 and not spec.value_search:
        raise ValueError(f"the {name} solver has no views: --views is for beam, astar and greedy")

    def search(cubes, last, count, opts: SolverOptions) -> list[SolveResult]:
        """One search of ``cubes`` with ``opts``: from its views where it has several."""
        if opts.views > 1:
            return solve_from_views(spec.run, cubes, last, count, opts, puzzle, solving, stops_views=spec.stops_views)
        return spec.run(cubes, last, count, opts, solving)

    if opts.first_width and "first_width" in spec.fields:
        return solve_anytime(search, cubes, last, count, opts)
    return search(cubes, last, count, opts)


# --------------------------------------------------------------------------- command line
_nodes = Cli.int_in(1, 100_000_000, "states generated per cube")
_beam_width = Cli.int_in(1, 10_000_000, "states kept per depth")
_astar_batch = Cli.int_in(1, 10_000_000, "open nodes expanded per step")
_symmetries = Cli.int_in(1, SYMMETRY_COUNT, "symmetries averaged")
_end_radius = Cli.int_in(0, MAX_END_RADIUS, "moves from solved of the end table")
_views = Cli.int_in(1, MAX_VIEWS, "views")  # each puzzle's own limit is checked in resolve_solver
_first_width = Cli.int_in(0, 10_000_000, "the first round's width")


# Long by design: the solver flags' table (one add_argument per flag), read top to bottom as --help lists it.
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
        help="beam ranks by the value, by cumulative policy log-probability (networks without a value), or "
        "mixed: the policy proposes 4 children per beam place and the value picks among them, one forward "
        f"pass per proposal (default: {d.beam_rank}; see --solver)",
    )
    g.add_argument(
        "--beam-widen",
        action="store_true",
        default=argparse.SUPPRESS,
        help="--solver beam doubles its width from --beam-width until --time-limit is spent and keeps the "
        "shortest solution (default: one beam of --beam-width)",
    )
    g.add_argument(
        "--ends",
        type=_end_radius,
        default=argparse.SUPPRESS,
        metavar="R",
        help="--solver beam finishes exactly from the first state it reaches within R moves of solved, from a "
        "table of every such position built at the start (3x3: R=6 is a million positions, a few seconds): "
        f"never a longer solution, R depths fewer; 0 turns it off (default: {d.ends}; see --solver)",
    )
    g.add_argument(
        "--first-width",
        type=_first_width,
        default=argparse.SUPPRESS,
        metavar="W",
        help="--solver beam answers first with a cheap beam of W from --first-views views, then runs the search "
        "the other flags set with the time and states left, kept where shorter: a slow machine still gets a "
        f"solution; 0 turns it off (default: {d.first_width}; see --solver)",
    )
    g.add_argument(
        "--first-views",
        type=_views,
        default=argparse.SUPPRESS,
        help=f"views of --first-width's first round (default: {d.first_views}; see --solver)",
    )
    g.add_argument(
        "--target-seconds",
        type=Cli.nonnegative_float,
        default=argparse.SUPPRESS,
        metavar="T",
        help="with --first-width: the search after the first round as wide as the first round's speed predicts to "
        "end within T seconds a cube (up to 8 times --beam-width, never narrower), so that a fast machine searches "
        f"wider; 0 turns it off (default: {d.target_seconds or 0:g}; see --solver)",
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
        "--symmetries",
        type=_symmetries,
        default=argparse.SUPPRESS,
        help="the network reads every cube under this many of the cube's 48 symmetries (rotations and "
        "mirrors, colours renamed) and averages its value and policy: fewer errors, that many times the "
        f"forwards; beam, astar and greedy (default: {d.symmetries}; see --solver)",
    )
    g.add_argument(
        "--views",
        type=_views,
        default=argparse.SUPPRESS,
        help="solve every cube from this many views (the cube and its inverse, each under the cube's "
        "symmetries) and keep the shortest solution, the budgets shared among them; beam, astar and greedy "
        f"(default: {d.views}; see --solver)",
    )
    g.add_argument(
        "--precision",
        choices=Precision.PRECISIONS,
        default=argparse.SUPPRESS,
        help=Precision.help_text("the search", "about twice the cubes a second")
        + f"; beam, astar and greedy (default: {d.precision}; see --solver)",
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
    "beam_widen",
    "ends",
    "first_width",
    "first_views",
    "target_seconds",
    "astar_batch",
    "astar_lambda",
    "sims",
    "c_puct",
    "seconds",
    "seed",
    "symmetries",
    "views",
    "precision",
)


def resolve_solver(args: argparse.Namespace) -> None:
    """Without ``--solver``: the puzzle's default solver (``Puzzle.default_solver``; the 2x2's is
    mcts, as always) and, for every budget flag not given, its budget
    (``Puzzle.default_solver_options``). Changes ``args`` in place; call it after parsing.
    ``--beam-widen`` without a time limit (given, or the puzzle's default), ``--target-seconds`` without a first
    round, or ``--views`` (``--first-views``)
    that the solver or the puzzle does not have, ends the run: one sentence on stderr, exit status 2."""
    target_given = getattr(args, "target_seconds", 0)  # before the puzzle's defaults fill it in
    if args.solver is None:
        puzzle = get_puzzle(getattr(args, "puzzle", None))
        args.solver = puzzle.default_solver
        for name, value in puzzle.default_solver_options.items():
            flag = _FLAG_OF_FIELD.get(name, name)
            if not hasattr(args, flag):
                setattr(args, flag, value)
    if getattr(args, "beam_widen", False) and getattr(args, "time_limit", None) is None:
        raise SystemExit(Cli.fail("--beam-widen needs --time-limit: the beam widens until the limit"))
    if target_given and not getattr(args, "first_width", 0):
        raise SystemExit(Cli.fail("--target-seconds needs --first-width: the first round's speed sizes the search"))
    views, puzzle = getattr(args, "views", 1), get_puzzle(getattr(args, "puzzle", None))
    if views > 1 and not SOLVERS[args.solver].value_search:
        raise SystemExit(Cli.fail(f"--views is for --solver beam, astar and greedy, not {args.solver}"))
    for flag in ("views", "first_views"):
        if getattr(args, flag, 1) > view_count_limit(puzzle):
            name = "--" + flag.replace("_", "-")
            raise SystemExit(Cli.fail(f"{name} is at most {view_count_limit(puzzle)} for the {puzzle.name}"))


def options_from_args(args: argparse.Namespace) -> SolverOptions:
    """``SolverOptions`` from parsed flags; flags a script does not have, or were not given,
    keep their defaults."""
    d = SolverOptions()
    return SolverOptions(**{f: getattr(args, _FLAG_OF_FIELD.get(f, f), getattr(d, f)) for f in _FIELDS_WITH_FLAGS})
