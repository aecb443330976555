"""The flags of ``main.py --game goN`` (Go training, Go_Run.py): the run's own (``--game``, ``--recipe``,
``--num-iters``, ``--time-budget``, ``--seed``, files, ``--workers``, ``--backend``) and one flag per
``Go_Training.GoRecipe`` field
(``--games``, ``--simulations``, ``--c-puct``, ``--augment`` ...), whose defaults a ``--recipe``
(``Recipes.GO_RECIPES``) replaces; flags given on the command line override both."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from go.Go_Training import SEARCHES, GoRecipe
from run import Cli, Workers
from run.Recipes import GO_RECIPES, recipe_text

#: The boards ``--game`` trains, by name (``Go_Game.GO_GAMES``'s).
GO_SIZES = {"go5": 5, "go7": 7, "go9": 9}
MAX_BUDGET_MINUTES = 24 * 60.0
#: GoRecipe fields that no flag sets: the board size is ``--game``'s.
NOT_FLAGS = ("size",)

_positive_int = Cli.int_in(1, 10**9)


def wants_go(argv=None) -> bool:
    """Whether a command line (default: ``sys.argv[1:]``) asks for Go (``--game``, or a Go ``--recipe``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    recipes = [b for a, b in zip(argv, argv[1:]) if a == "--recipe"] + [
        a[9:] for a in argv if a.startswith("--recipe=")
    ]
    return any(a == "--game" or a.startswith("--game=") for a in argv) or any(r in GO_RECIPES for r in recipes)


def field_flag(parser: argparse.ArgumentParser, field: dataclasses.Field) -> None:
    """The flag of one GoRecipe field, typed by its default."""
    flag, default = "--" + field.name.replace("_", "-"), field.default
    help_text = "a GoRecipe setting (Go_Training.py)"
    if field.name == "search":
        help_text = "self-play's search: 'puct' (the seed's) or 'gumbel' (Gumbel AlphaZero, Gumbel_MCTS.py)"
        parser.add_argument(flag, choices=SEARCHES, default=default, help=help_text)
    elif isinstance(default, bool):
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=help_text)
    elif isinstance(default, tuple):
        parser.add_argument(flag, type=_positive_int, nargs="*", default=list(default), help=help_text)
    elif isinstance(default, float) or field.name == "komi":
        parser.add_argument(flag, type=Cli.nonnegative_float, default=default, help=help_text)
    else:
        # A game of no move is no game (the board refuses it): --max-moves starts at 1.
        lowest = 1 if field.name == "max_moves" else 0
        parser.add_argument(flag, type=Cli.int_in(lowest, 10**6), default=default, help=help_text)


def build_parser(description: str | None = None) -> Cli.ArgumentParser:
    parser = Cli.ArgumentParser(prog="main.py", description=description, formatter_class=Cli.HelpFormatter)
    parser.add_argument(
        "--game", choices=sorted(GO_SIZES), help="the Go board to train (default: the --recipe's board)"
    )
    parser.add_argument(
        "--recipe",
        choices=sorted(GO_RECIPES),
        help="a preset: " + "; ".join(f"{n}: {recipe_text(n, GO_RECIPES) or 'GoRecipe defaults'}" for n in GO_RECIPES),
    )
    parser.add_argument("--num-iters", type=_positive_int, default=1_000_000, help="iterations at most")
    parser.add_argument(
        "--time-budget",
        type=Cli.nonnegative_float,
        default=0.0,
        help="minutes of training in all, every session of the run together (0: no limit)",
    )
    parser.add_argument("--seed", type=Cli.seed, default=0, help="seed of every random choice")
    # Checked with the cube's (Run_Files.check_output_paths), before any work: one sentence for both.
    parser.add_argument("--checkpoint", help="model file (default: goN_policy_value.pt)")
    parser.add_argument("--log-dir", help="metrics, chart, TensorBoard (training_logs_goN)")
    parser.add_argument(
        "--snapshot-every", type=Cli.int_in(0, 10**6), default=25, help="keep a copy of the model every K iterations"
    )
    parser.add_argument("--fresh", action="store_true", help="start over even if a training state exists")
    for field in dataclasses.fields(GoRecipe):
        if field.name not in NOT_FLAGS:
            field_flag(parser, field)
    Cli.add_device_flag(parser)
    Workers.add_arguments(parser)  # self-play split over workers: the same numbers for any --workers
    return parser


def parse_args(argv=None, description: str | None = None) -> argparse.Namespace:
    """The Go training flags of ``argv``; a bad one ends the process (one sentence, exit status 2)."""
    parser = build_parser(description)
    known, _ = parser.parse_known_args(argv)
    if known.recipe is not None:
        parser.set_defaults(**GO_RECIPES[known.recipe])
    args = parser.parse_args(argv)
    if args.game is None:
        parser.error("--game is required (go5, go7 or go9) unless a Go --recipe names the board")
    size = GO_SIZES[args.game]
    args.checkpoint = f"go{size}_policy_value.pt" if args.checkpoint is None else args.checkpoint
    args.log_dir = f"training_logs_go{size}" if args.log_dir is None else args.log_dir
    checks = [
        (args.time_budget <= MAX_BUDGET_MINUTES, f"--time-budget is at most {MAX_BUDGET_MINUTES:g} minutes"),
        (args.games >= 1 and args.simulations >= 1, "--games and --simulations must be at least 1"),
        (args.train_steps >= 1 and args.batch_size >= 1, "--train-steps and --batch-size must be at least 1"),
        (args.filters >= 1 and args.history >= 1, "--filters and --history must be at least 1"),
        (args.lr > 0 and args.c_puct > 0, "--lr and --c-puct must be positive"),
        (args.c_puct <= Cli.MAX_C_PUCT, f"--c-puct is at most {Cli.MAX_C_PUCT:g} (beyond, the search's sums overflow)"),
        (
            max(
                args.noise_fraction,
                args.buffer_fraction,
                args.gate_threshold,
                args.sampled_side,
                args.sampled_epsilon,
                args.hopeless,
            )
            <= 1,
            "--noise-fraction, --buffer-fraction, --gate-threshold, --sampled-side, --sampled-epsilon and "
            "--hopeless are 0..1",
        ),  # fmt: skip
        (args.dirichlet_alpha > 0, "--dirichlet-alpha must be positive"),
        (
            args.dirichlet_alpha <= Cli.MAX_DIRICHLET_ALPHA,
            f"--dirichlet-alpha is at most {Cli.MAX_DIRICHLET_ALPHA:g} (the noise is uniform long before)",
        ),
        (
            args.sampled_side == 0 or args.search == "puct",
            "--sampled-side is a setting of PUCT self-play (--search puct)",
        ),
        (
            args.sampled_side > 0 or (args.sampled_simulations == 0 and args.sampled_c_puct == 0),
            "--sampled-simulations and --sampled-c-puct need --sampled-side above 0",
        ),
    ]
    for ok, message in checks:
        if not ok:
            parser.error(message)
    return args


def recipe_of(args: argparse.Namespace) -> GoRecipe:
    """The ``GoRecipe`` the flags give."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(GoRecipe) if f.name not in NOT_FLAGS}
    values["lr_milestones"] = tuple(values["lr_milestones"])
    return GoRecipe(size=GO_SIZES[args.game], **values)
