"""Watch the solver on one cube: scramble it, then print every move MCTS picks and the cube
after it, in ASCII (the original project's debugging script).

The cube is scrambled with ``--scramble-len`` random moves (drawn from ``--seed``; when no
seed is given one is drawn and printed, so any run can be repeated), or with an explicit
``--scramble "R U F'"``. Each move is chosen greedily from the visit counts of a fresh MCTS
(``--sims`` simulations) until the cube is solved or ``--max-steps`` moves were made.
``--json`` prints one JSON object instead of the text.

``--solver`` (default ``mcts``, the search above, unchanged) solves the cube another way:
``greedy``, ``beam``, ``astar``, ``bestfirst`` (no model needed) or ``gumbel`` (see
``Solvers.py``); the moves are then printed one by one the same way. Every run ends with the
states the solver generated (MCTS: simulations) and the seconds it took.

``--puzzle 3x3`` plays the 3x3 instead (any ``--solver``, MCTS move by move as on the 2x2; without
``--solver``, the multi-view mixed beam of docs/puzzles.md), with
``pretrained/rubik3x3_policy_value.pt`` or ``--checkpoint``; the reference length is then kociemba's
two-phase solution in quarter turns (``kociemba`` in the JSON), there being no exact optimal solver for it.
"""

from __future__ import annotations

if __name__ == "__main__":  # first: a signal during the slow imports below ends the script as at any moment
    from run import Process_Signals

    Process_Signals.start_script()

import argparse
import dataclasses
import json
import secrets
import time

import torch

from cube.Cube_Checkpoints import find_and_load_model, load_model
from cube.Puzzles import C_PUCT, Puzzle, add_puzzle_flag, get_puzzle
from cube.Solvers import (
    NETWORK_SOLVERS,
    SolverOptions,
    add_solver_arguments,
    options_from_args,
    resolve_solver,
    solve_cubes,
)
from go import Go_Args, Go_Match
from Optimal_Solver import get_solver
from Policy_Value_Net import PolicyValueNet
from Rubik2x2Env import MOVE_NAMES, format_moves, parse_moves
from run import Cli
from run.Cli import (
    MAX_MOVES,
    DeviceError,
    HelpFormatter,
    add_checkpoint_flag,
    add_device_flag,
    fail,
    resolve_device,
)
from run.Run_IO import CheckpointError
from Self_Play import greedy_solve


def load_network_in_eval_mode(path: str, device) -> PolicyValueNet:
    """The original's ``load_model`` helper, renamed so as not to shadow
    ``Cube_Checkpoints.load_model``: a ``PolicyValueNet`` with the weights of ``path``, in eval
    mode, on ``device``. Raises ``CheckpointError`` (one sentence) for a missing or corrupt file."""
    return load_model(path, device)


def optimal_length(cube) -> int | None:
    """The true distance of ``cube`` (optimal solver), or None if the solver is unavailable:
    it is extra information, the episode does not depend on it."""
    try:
        return get_solver().distance(cube)
    except Exception:  # noqa: BLE001 - e.g. its 3.6 MB table cannot be built or read
        return None


def _moves(n: int) -> str:
    return f"{n} move" if n == 1 else f"{n} moves"


def run_one_episode(
    model,
    device,
    scramble_len=5,
    num_simulations=200,
    max_steps=MAX_MOVES,
    *,
    scramble=None,
    seed=None,
    c_puct=C_PUCT,
    out=print,
    solver="mcts",
    options: SolverOptions | None = None,
    puzzle: Puzzle | str | None = None,
) -> dict:
    """Scramble a cube and solve it with greedy MCTS, printing each step through ``out``
    (``None``: silent). Returns ``{scramble, scramble_moves, solution, actions, solved,
    length, optimal, seed, solver, nodes, seconds}``.

    ``scramble`` (a move string or a list of action indices) overrides ``scramble_len``;
    otherwise the env draws the scramble from ``seed``. The moves come from
    ``Self_Play.greedy_solve``, the solve the GUI runs too. ``solver`` other than ``mcts``:
    ``Solvers.solve_cubes`` finds the moves (``options``; simulations, move limit and c_puct
    from the arguments here), then they are played and printed the same way. ``nodes``: the
    states the solver generated (MCTS: simulations); ``seconds``: time spent searching.
    ``puzzle`` (default the 2x2): the 3x3 has no ``optimal`` (None) but ``kociemba``, the length
    of kociemba's solution in quarter turns.
    """
    say = out if out is not None else (lambda *_: None)
    puzzle = get_puzzle(puzzle)
    env = puzzle.make_env(scramble_len=scramble_len, max_steps=max_steps, use_action_mask=True)
    _, info = env.reset(seed=seed, options=None if scramble is None else {"scramble": scramble})
    scramble_text = info["scramble"]
    exact = puzzle.reference == "optimal"
    optimal, reference = _reference_lengths(puzzle, env.stickers)

    n_scramble = len(parse_moves(scramble_text))
    known = "" if optimal is None else f"   [optimal solution: {_moves(optimal)}]"
    known += "" if reference is None else f"   [{puzzle.reference}: {_moves(reference)}]"
    say(f"Scramble ({_moves(n_scramble)}): {scramble_text or '(none)'}{known}")
    say("Initial state:")
    say(env.as_ascii())
    actions: list[int] = []

    def show(action: int) -> None:
        actions.append(action)
        say("")
        say(f"Step {len(actions)}: move {MOVE_NAMES[action]} (index {action})")
        say(env.as_ascii())

    if solver == "mcts":
        seconds = _play_mcts(model, env, num_simulations, max_steps, device, c_puct, puzzle, show)
        nodes = len(actions) * num_simulations
    else:
        opts = dataclasses.replace(options or SolverOptions(), sims=num_simulations, max_moves=max_steps, c_puct=c_puct)
        nodes, seconds = _play_solver(solver, model, env, opts, device, puzzle, show)
    solved = puzzle.model.is_solved(env.cube)
    say("")
    say(_outcome_text(solved, actions, max_steps, optimal, puzzle.reference, reference))
    unit = "simulations" if solver in ("mcts", "gumbel") else "states generated"
    say(f"Search ({solver}): {nodes:,} {unit} in {seconds:.3f} s.")
    record = {
        "scramble": scramble_text,
        "scramble_moves": n_scramble,
        "solution": format_moves(actions),
        "actions": actions,
        "solved": solved,
        "length": len(actions),
        "optimal": optimal,
        "seed": seed,
        "solver": solver,
        "nodes": int(nodes),
        "seconds": round(float(seconds), 6),
    }
    if not exact:
        record.update(puzzle=puzzle.name, **{puzzle.reference: reference})
    return record


def _outcome_text(
    solved: bool, actions: list[int], max_steps: int, optimal: int | None, ref_name: str, reference: int | None
) -> str:
    """``Solved in N moves (optimal: K): MOVES`` or ``Not solved within N moves.``; ``reference``:
    None or the length of the puzzle's reference solution, named ``ref_name`` (the 3x3: kociemba)."""
    if not solved:
        return f"Not solved within {_moves(max_steps)}."
    extra = "" if optimal is None else f" (optimal: {optimal})"
    extra += "" if reference is None else f" ({ref_name}: {reference})"
    return f"Solved in {_moves(len(actions))}{extra}: {format_moves(actions) or '(already solved)'}"


def _play_mcts(model, env, num_simulations: int, max_steps: int, device, c_puct: float, puzzle: Puzzle, show) -> float:
    """Play ``Self_Play.greedy_solve``'s moves on ``env`` (a cube of ``puzzle``), calling ``show(action)``
    after each: the seconds spent searching (the printing between moves not counted)."""
    seconds = 0.0
    moves = greedy_solve(model, env, num_simulations, max_steps, device=device, c_puct=c_puct, game=puzzle)
    while True:
        began = time.perf_counter()
        action = next(moves, None)
        seconds += time.perf_counter() - began
        if action is None:
            return seconds
        show(action)


def _play_solver(solver: str, model, env, options: SolverOptions, device, puzzle: Puzzle, show) -> tuple[int, float]:
    """Find the moves for ``env``'s cube with ``Solvers.solve_cubes`` and play them on ``env``,
    calling ``show(action)`` after each: the states the solver generated and its seconds."""
    [result] = solve_cubes(solver, env.stickers, model=model, options=options, device=device, puzzle=puzzle)
    for action in result.moves:
        env.step(action)
        show(action)
    return result.nodes, result.seconds


def _reference_lengths(puzzle: Puzzle, stickers) -> tuple[int | None, int | None]:
    """``(optimal, reference)`` lengths of ``stickers`` (one cube): the optimal length where the
    puzzle's reference is ``"optimal"`` (the 2x2), else its reference solver's (the 3x3's kociemba)."""
    if puzzle.reference == "optimal":
        return optimal_length(stickers), None
    return None, int(puzzle.reference_lengths(stickers)[0])


# --------------------------------------------------------------------------- command line
def _move_string(text: str) -> str:
    """argparse type for --scramble: rejects unknown moves up front (exit status 2)."""
    try:
        parse_moves(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def parse_args(argv=None) -> argparse.Namespace:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    g = p.add_argument_group("the cube")
    add_puzzle_flag(g)
    g.add_argument(
        "--scramble-len", type=Cli.scramble_len, default=5, help="random scramble moves (ignored with --scramble)"
    )
    g.add_argument(
        "--scramble", type=_move_string, metavar="MOVES", help='explicit scramble, e.g. "R U F\'" (R2 = two turns)'
    )
    g.add_argument(
        "--seed", type=Cli.seed, default=None, help="seed of the random scramble (default: a fresh one, printed)"
    )
    g = p.add_argument_group("search")
    g.add_argument("--sims", type=Cli.simulations, default=200, help="MCTS simulations per move")
    g.add_argument(
        "--max-steps",
        type=Cli.move_limit,
        default=None,
        help=f"moves allowed before giving up (default: {MAX_MOVES}; "
        f"{get_puzzle('3x3').default_max_moves} for the 3x3)",
    )
    g.add_argument("--c-puct", type=Cli.positive_float, default=C_PUCT, help="PUCT exploration constant")
    g = p.add_argument_group("run")
    add_checkpoint_flag(g)
    add_device_flag(g)
    g.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (scramble, solution, solved, length, optimal, checkpoint) instead of the text",
    )
    add_solver_arguments(p)
    args = p.parse_args(argv)
    if args.max_steps is None:
        args.max_steps = get_puzzle(args.puzzle).default_max_moves
    resolve_solver(args)  # no --solver: the puzzle's default solver and budgets
    checks = [
        (args.scramble_len >= 0, "--scramble-len must be at least 0"),
        (args.sims >= 1, "--sims must be at least 1"),
        (args.max_steps >= 1, "--max-steps must be at least 1"),
        (args.c_puct > 0, "--c-puct must be positive"),
        (args.seed is None or args.seed >= 0, "--seed must be a non-negative integer"),
    ]
    for ok, message in checks:
        if not ok:
            p.error(message)
    return args


def main(argv=None) -> int:
    if Go_Args.wants_go(argv):  # a Go board: its matches (Go_Match.py)
        return Go_Match.show_main(argv)
    args = parse_args(argv)
    # One search tree sends the network a handful of states at a time: a second thread only
    # adds synchronisation (and, beside another busy process, long waits).
    torch.set_num_threads(1)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    try:
        device = resolve_device(args.device)
        if args.solver in NETWORK_SOLVERS:
            model, path = find_and_load_model(args.checkpoint, device, args.puzzle)
        else:  # bestfirst: a hand heuristic, no network
            model, path = None, None
    except (CheckpointError, DeviceError) as exc:
        return fail(exc)
    out = None if args.json else print
    if out and args.solver == "mcts":
        print(f"Loaded model {path} on {device}; greedy MCTS with {args.sims} simulations per move, seed {seed}.")
    elif out:
        print(
            (f"Loaded model {path} on {device}; " if model is not None else "No model needed; ")
            + f"solver {args.solver}, seed {seed}."
        )
    record = run_one_episode(
        model,
        device,
        args.scramble_len,
        args.sims,
        args.max_steps,
        scramble=args.scramble,
        seed=seed,
        c_puct=args.c_puct,
        out=out,
        solver=args.solver,
        options=options_from_args(args),
        puzzle=args.puzzle,
    )
    if args.json:
        record.update(checkpoint=path, device=str(device), num_simulations=args.sims, max_steps=args.max_steps)
        print(json.dumps(record))
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
