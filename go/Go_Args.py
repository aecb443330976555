"""The flags of ``main.py --game goN`` (Go training, Go_Run.py): the run's own (``--game``, ``--recipe``,
``--num-iters``, ``--time-budget``, ``--seed``, files, ``--workers``, ``--backend``) and one flag per
``Go_Training.GoRecipe`` field
(``--games``, ``--simulations``, ``--c-puct``, ``--augment`` ...), whose defaults a ``--recipe``
(``Recipes.GO_RECIPES``) replaces; flags given on the command line override both."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from engine import Precision
from engine.Search_Tree import SEARCHES
from go.Go_Training import GoRecipe
from run import Cli, Workers
from run.Recipes import GO_RECIPES, recipe_text

#: The boards ``--game`` trains, by name: any board the rules play, 5x5 to 19x19 (SPEC section 10); the
#: recipes and the registry's games (``Go_Game.GO_GAMES``) are 5x5, 7x7 and 9x9.
GO_SIZES = {f"go{n}": n for n in range(5, 20)}
MAX_BUDGET_MINUTES = 24 * 60.0
#: GoRecipe fields that no flag sets: the board size is ``--game``'s.
NOT_FLAGS = ("size",)
#: GoRecipe fields of experiments that no --recipe uses: --help lists them last, under their own heading.
EXPERIMENTS = ("sampled_epsilon",)

#: GoRecipe fields whose flag takes one of these names.
CHOICES = {"search": SEARCHES, "precision": Precision.PRECISIONS}

_positive_int = Cli.int_in(1, 10**9)


def _share(text: str) -> float:
    """argparse type: a share strictly between 0 and 1."""
    value = Cli.nonnegative_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1")
    return value


def wants_go(argv=None) -> bool:
    """Whether a command line (default: ``sys.argv[1:]``) asks for Go (``--game``, or a Go ``--recipe``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    recipes = [b for a, b in zip(argv, argv[1:]) if a == "--recipe"] + [
        a[9:] for a in argv if a.startswith("--recipe=")
    ]
    return any(a == "--game" or a.startswith("--game=") for a in argv) or any(r in GO_RECIPES for r in recipes)


#: The help of each GoRecipe field's flag (the field's own comment in Go_Training.py says why its default).
FIELD_HELP = {
    "komi": "komi (default: Go_Board's for the size: 24.5 on 5x5, 8.5 on 7x7, 7 on 9x9)",
    "max_moves": "moves a self-play game may last (default: 2 N^2)",
    "history": "board positions the network sees (the current one and the ones before)",
    "filters": "the network's convolution filters",
    "blocks": "the network's residual blocks",
    "simulations": "PUCT simulations per self-play move",
    "c_puct": "PUCT exploration constant of self-play",
    "dirichlet_alpha": "the root noise's Dirichlet alpha",
    "noise_fraction": "the root noise's share of the priors",
    "opening_moves": "moves drawn from the visit counts before greedy play (default: 15%% of 0.6 N^2)",
    "games": "self-play games an iteration, played in lockstep",
    "buffer_fraction": "the replay buffer keeps this share of all games played ...",
    "buffer_min_games": "... and at least this many games",
    "train_steps": "SGD steps an iteration",
    "batch_size": "samples per SGD step",
    "lr": "SGD learning rate (divided by 10 at each of --lr-milestones)",
    "lr_milestones": "SGD steps (counted from the start) at which the learning rate drops by 10",
    "lr_drops": "shares of --time-budget (0..1) at which the learning rate drops by 10, instead of "
    "--lr-milestones (none: no drop)",
    "momentum": "SGD momentum",
    "augment": "train each sample under one of the board's 8 symmetries drawn at random",
    "sampled_side": "share of PUCT self-play games in which one colour draws every move from its visit counts",
    "sampled_temperature": "the sampled colour's temperature",
    "sampled_epsilon": "the sampled colour's chance of a uniformly random legal move other than pass",
    "sampled_simulations": "the sampled colour's simulations (0: --simulations)",
    "sampled_c_puct": "the sampled colour's c_puct (0: --c-puct)",
    "hopeless": "a sample valued below -H for its player to move trains the value only (0: off)",
    "full_search_share": "playout cap randomization: this share of the moves (not the sampled colour's) is "
    "searched fully with root noise and trains; the rest searches --fast-simulations and trains nothing",
    "fast_simulations": "the cheap searches' simulations (with --full-search-share below 1)",
    "komi_input": "the network sees the komi (an input plane): one network for every komi",
    "komi_spread": "each self-play game's komi: the board's fair komi plus a normal of this spread, rounded "
    "to a half point (a tenth of the games 4x as wide; 0: every game at --komi)",
    "score_heads": "score and ownership heads trained on each game's final margin and owners",
    "score_weight": "the score head's loss weight",
    "ownership_weight": "the ownership head's loss weight",
    "score_utility": "the score term's share in the search's value (0..1; needs --score-heads)",
    "score_belief": "a score belief head (the final board margin's distribution) from which the search reads "
    "its win value at the komi exactly (needs --komi-input and --score-heads)",
    "belief_weight": "the score belief's loss weight",
    "search": "self-play's search: 'puct' (the seed's) or 'gumbel' (Gumbel AlphaZero, Gumbel_MCTS.py)",
    "precision": Precision.help_text("self-play and training", "a go9 move 1.35x as fast"),
    "gate_games": "the seed's arena after each iteration: games against the network before training (0: none)",
    "gate_threshold": "the trained network is kept if it scores more than this share in the arena",
}


def field_flag(field: dataclasses.Field) -> Cli.Flag:
    """The flag of one GoRecipe field, typed by its default."""
    flag, default, help_text = "--" + field.name.replace("_", "-"), field.default, FIELD_HELP[field.name]
    if field.name in CHOICES:
        return Cli.Flag(flag, default, help_text, choices=CHOICES[field.name])
    if isinstance(default, bool):
        return Cli.Flag(flag, default, help_text, action=argparse.BooleanOptionalAction)
    if isinstance(default, tuple):
        kind = _share if field.name == "lr_drops" else _positive_int
        return Cli.Flag(flag, list(default), help_text, type=kind, nargs="*")
    if isinstance(default, float) or field.name == "komi":
        return Cli.Flag(flag, default, help_text, type=Cli.nonnegative_float)
    # A game of no move is no game (the board refuses it): --max-moves starts at 1.
    return Cli.Flag(flag, default, help_text, type=Cli.int_in(1 if field.name == "max_moves" else 0, 10**6))


#: Every flag of ``main.py --game goN``, by --help group (as Train_Args.FLAG_GROUPS for the cube).
FLAG_GROUPS: dict[str | None, list] = {
    None: [
        Cli.Flag("--game", None, "the Go board to train (default: the --recipe's board)", choices=list(GO_SIZES)),
        Cli.Flag(
            "--recipe",
            None,
            "a preset: " + "; ".join(f"{n}: {recipe_text(n, GO_RECIPES) or 'GoRecipe defaults'}" for n in GO_RECIPES),
            choices=sorted(GO_RECIPES),
        ),
    ],
    "run": [
        Cli.Flag("--num-iters", 1_000_000, "iterations at most", type=_positive_int),
        Cli.Flag(
            "--time-budget",
            0.0,
            "minutes of training in all, every session of the run together (0: no limit)",
            type=Cli.nonnegative_float,
        ),
        Cli.Flag("--seed", 0, "seed of every random choice", type=Cli.seed),
        # Checked with the cube's (Run_Files.check_output_paths), before any work: one sentence for both.
        Cli.Flag("--checkpoint", None, "model file (default: goN_policy_value.pt)"),
        Cli.Flag("--log-dir", None, "metrics, chart, TensorBoard (training_logs_goN)"),
        Cli.Flag("--snapshot-every", 25, "keep a copy of the model every K iterations", type=Cli.int_in(0, 10**6)),
        Cli.Flag("--fresh", False, "start over even if a training state exists", action="store_true"),
        Cli.add_device_flag,
        Workers.add_arguments,  # self-play split over workers: the same numbers for any --workers
    ],
    "recipe (defaults = the seed's, Go_Training.GoRecipe)": [
        field_flag(f) for f in dataclasses.fields(GoRecipe) if f.name not in (*NOT_FLAGS, *EXPERIMENTS)
    ],
    "experiments (no --recipe uses them; docs/go.md)": [
        field_flag(f) for f in dataclasses.fields(GoRecipe) if f.name in EXPERIMENTS
    ],
}


def build_parser(description: str | None = None) -> Cli.ArgumentParser:
    return Cli.parser_from_groups(FLAG_GROUPS, description, prog="main.py")


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
        (args.score_utility < 1, "--score-utility is below 1"),
        (0 < args.full_search_share <= 1, "--full-search-share is above 0 and at most 1"),
        (
            args.full_search_share == 1 or args.fast_simulations >= 1,
            "--full-search-share below 1 needs --fast-simulations",
        ),
        (args.score_heads or args.score_utility == 0, "--score-utility needs --score-heads"),
        (not args.lr_drops or args.time_budget > 0, "--lr-drops are shares of the --time-budget: give one"),
        (not (args.lr_drops and args.lr_milestones), "--lr-drops and --lr-milestones are one or the other"),
        (list(args.lr_drops) == sorted(set(args.lr_drops)), "--lr-drops go up, each once"),
        (args.komi_input or args.komi_spread == 0, "--komi-spread needs --komi-input"),
        (
            not args.score_belief or (args.komi_input and args.score_heads),
            "--score-belief needs --komi-input and --score-heads",
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
    values["lr_drops"] = tuple(values["lr_drops"])
    return GoRecipe(size=GO_SIZES[args.game], **values)
