"""The command line of ``main.py``, declared once: ``FLAG_GROUPS`` is the table of every flag (name,
default, help, and its type with the bounds it accepts), from which ``build_parser`` makes the
argparse parser; ``parse_args`` applies a ``--recipe`` (Recipes.py) as new defaults, fills the
defaults that depend on the ``--puzzle`` and refuses flags that do not work together, each
with one sentence on stderr and exit status 2."""

from __future__ import annotations

import argparse

from cube.Puzzles import C_PUCT, PUZZLES, add_puzzle_flag, get_puzzle
from cube.Seed_System_Targets import SEED_TARGETS
from cube.Solvers import SOLVER_NAMES
from engine import Precision
from engine.Gumbel_Self_Play import BOOTSTRAP_STEPS, SEARCH_VALUE_TARGETS, SEARCH_VALUES
from engine.Search_Tree import SEARCHES
from Optimal_Solver import MAX_DISTANCE
from Policy_Value_Net import HIDDEN_SIZES
from run import Cli, Workers
from run.Cli import EVAL_SIMULATIONS, MAX_MOVES, Flag, add_device_flag
from run.Recipes import RECIPES, recipe_text
from Self_Play import VALUE_TARGETS
from Train_Network import VALUE_LOSSES, VALUE_WEIGHT

TARGET_SOURCES = ("selfplay", "lookahead", "sweep", *SEED_TARGETS)
LR_SCHEDULES = ("constant", "cosine", "cosine-time")
#: What --targets the 3x3 trains with: every trainer but the sweep, whose tables are the 2x2's classes
#: of positions up to symmetry (the search, self-play and the targets read the puzzle's entry).
TARGETS_3X3 = tuple(t for t in TARGET_SOURCES if t != "sweep")


#: Every flag, by --help group (None: the parser's own, before the groups), in --help's order. A
#: function in a group adds flags that other scripts share (--puzzle, --device, --workers ...).
FLAG_GROUPS: dict[str | None, list] = {
    None: [
        Flag(
            "--recipe",
            None,
            "a named preset of the flags below (single flags still override it); none = the original recipe. "
            + "; ".join(f"{name}: {recipe_text(name)}" for name in RECIPES),
            choices=list(RECIPES),
        ),
    ],
    "recipe (defaults = the original project)": [
        add_puzzle_flag,
        Flag("--num-iters", 100, "training iterations (NUM_ITERS)", type=Cli.iterations),
        Flag("--episodes-per-iter", 80, "self-play episodes per iteration (EPISODES_PER_ITER)", type=Cli.episodes),
        Flag("--epochs", 10, "passes over the training sample per iteration (EPOCHS)", type=Cli.epochs),
        Flag("--batch-size", 256, "mini-batch size (BATCH_SIZE)", type=Cli.batch_size),
        Flag(
            "--lr",
            2e-4,
            "Adam learning rate (LR); a new Adam every iteration, as the original",
            type=Cli.positive_float,
        ),
        Flag(
            "--solve-threshold", 0.9, "mean solve rate over the window needed to lengthen scrambles", type=Cli.fraction
        ),
        Flag("--window", 8, "trained iterations in the curriculum's solve-rate window", type=Cli.iterations),
        Flag("--start-scramble-len", 3, "scramble length of the first iteration", type=Cli.scramble_len),
        Flag(
            "--max-episode-steps",
            MAX_MOVES,
            "moves per self-play episode before it counts as unsolved",
            type=Cli.move_limit,
        ),
        Flag("--buffer-size", 100_000, "replay buffer capacity in states (BUFFER_MAXLEN)", type=Cli.buffer_size),
        Flag(
            "--min-buffer-batches",
            8,
            "train only once the buffer holds this many batches (MIN_BUFFER_SIZE = BATCH_SIZE*8)",
            type=Cli.buffer_batches,
        ),
        Flag(
            "--sample-batches",
            16,
            "states trained on per iteration, in batches (TRAIN_SAMPLE_SIZE = BATCH_SIZE*16)",
            type=Cli.batches,
        ),
        Flag(
            "--sims",
            [300, 600, 800],
            "MCTS simulations per move for scramble length <=3, <=7, longer (three numbers), or one number for "
            "every length",
            type=Cli.simulations,
            nargs="+",
            metavar="N",
        ),
        Flag(
            "--temps",
            [1.0, 0.7, 0.4, 0.2],
            "self-play temperature for length <=5, <=9, <=11, longer",
            type=Cli.positive_float,
            nargs=4,
            metavar=("LE5", "LE9", "LE11", "LONGER"),
        ),
        Flag("--c-puct", C_PUCT, "PUCT exploration constant", type=Cli.positive_float),
        Flag(
            "--select-mode", "sample", "how self-play picks moves from the visit counts", choices=["sample", "greedy"]
        ),
    ],
    "recipe changes beyond the original (defaults keep the original)": [
        Flag(
            "--value-target",
            "episode",
            "value target of a state in an episode solved in n moves: 'episode' = max(0.4, 1-0.03n) for every state "
            "(original); "
            "'remaining' = max(0.4, 1-0.03*(moves still needed from that state)); with --search gumbel, solved or not: "
            "'search' = the search's value of that state (--search-value); 'bootstrap' = -0.03 per move for the next "
            "--bootstrap-steps moves played, plus the search's value of the state reached (1 if solved); "
            "'bootstrap-max' = the largest of the 0- to --bootstrap-steps-step returns (a sampled move may be a "
            "detour)",
            choices=[*VALUE_TARGETS, *SEARCH_VALUE_TARGETS],
        ),
        Flag(
            "--bootstrap-steps",
            BOOTSTRAP_STEPS,
            "with --value-target bootstrap or bootstrap-max: the moves n of the n-step target "
            "(0 = --value-target search)",
            type=Cli.int_in(0, Cli.MAX_MOVE_LIMIT, "moves"),
        ),
        Flag(
            "--search-value",
            "mean",
            "with --value-target search or bootstrap: the search's value of a state: 'mean' = the root's value, "
            "the mean return of all its simulations (mctx); 'best' = the Q of the best root move visited",
            choices=list(SEARCH_VALUES),
        ),
        Flag(
            "--depth-bound",
            True,
            "with --value-target search or bootstrap: a state t moves into an episode from a k-move scramble is at "
            "most k + t moves out, so its target is at least 1 - 0.03 (k + t)",
            action=argparse.BooleanOptionalAction,
        ),
        Flag(
            "--search",
            "puct",
            "the self-play search: 'puct' = the original's MCTS, moves sampled from the visit counts, policy target "
            "= visit counts; 'gumbel' = Gumbel AlphaZero root search (Gumbel_MCTS.py): each move the Sequential "
            "Halving "
            "winner under Gumbel noise, policy target = the completed-Q improved policy (--temps, --select-mode and "
            "--c-puct unused)",
            choices=list(SEARCHES),
        ),
        Flag(
            "--gumbel-scale",
            1.0,
            "with --search gumbel: scale of the Gumbel noise on the root's moves (1 = the paper's self-play; 0 = "
            "always the search's best move)",
            type=Cli.nonnegative_float,
        ),
        Flag(
            "--max-considered",
            16,
            "with --search gumbel: root actions Sequential Halving starts from (the paper's 16; a cube has 12 moves)",
            type=Cli.int_in(1, 16, "root actions"),
        ),
        Flag(
            "--targets",
            "selfplay",
            "where training targets come from: 'selfplay' = MCTS self-play episodes (original); 'lookahead' = "
            "states of random scramble paths, targets from a one-ply search of all 12 moves with the current network; "
            "'sweep' = every class of positions up to symmetry once per iteration plus the states of random scramble "
            "paths, targets from one network read per class (Value_Sweep.py; needs --canonical-symmetry); 'adi' (seed "
            "001), 'scramble' (seed 002) and 'diffusion' (CayleyPy: value = the length of the non-backtracking random "
            "walk from solved that reached a state, policy = undo its last move): Seed_System_Targets.py",
            choices=list(TARGET_SOURCES),
        ),
        Flag(
            "--walk-len",
            0,
            "with --targets adi, scramble or diffusion: the longest scramble path or random walk; 0 = the "
            "curriculum's scramble length (the greedy solve rate is measured at that length either way)",
            type=Cli.int_in(0, 1000, "moves"),
        ),
        Flag(
            "--hidden-sizes",
            list(HIDDEN_SIZES),
            "widths of the network's hidden layers, each Linear + LayerNorm + ReLU (a saved network keeps its own)",
            type=Cli.int_in(1, 16384, "units"),
            nargs="+",
            metavar="N",
        ),
        Flag(
            "--input",
            "stickers",
            "what the network's first layer reads: 'stickers' (a Linear on the one-hot stickers, the original) or "
            "'pairs' (one table row per cubie slot, picked by two of its stickers' colours: Pair_Input.py); a saved "
            "network keeps its own",
            choices=["stickers", "pairs"],
        ),
        Flag(
            "--residual-blocks",
            0,
            "residual blocks at the last hidden width after the hidden layers (Policy_Value_Net.ResidualBlock: two "
            "Linear + LayerNorm layers around a skip; 0 = the plain stack, the original); a saved network keeps "
            "its own",
            type=Cli.int_in(0, 64, "residual blocks"),
        ),
        Flag(
            "--double-estimate",
            False,
            "with --targets lookahead: value the chosen move's child a second time with the cube turned as a whole "
            "(mirrored, with --canonical-orientation): same distance, other input, which removes the upward bias of "
            "the max over noisy values",
            action="store_true",
        ),
        Flag(
            "--canonical-orientation",
            False,
            "turn every cube into its canonical orientation (one of 24 whole-cube rotations) before the network, so "
            "all "
            "orientations of a position share one input; a checkpoint trained this way stays so, and a plain one is a "
            "starting point",
            action="store_true",
        ),
        Flag(
            "--canonical-symmetry",
            False,
            "as --canonical-orientation, and also map every cube to one representative of the (up to) 48 positions "
            "that "
            "are the same up to a symmetry of the cube (colours renamed as a rotation renames them, and mirror "
            "images): "
            "about 48 times fewer positions for the network to learn",
            action=argparse.BooleanOptionalAction,
        ),
        Flag(
            "--keep-optimizer",
            False,
            "one Adam optimizer for the whole run (saved with the training state) instead of a new one every "
            "iteration: "
            "a fresh Adam's first steps move every weight by about --lr, which blurs values that must be exact to 0.03",
            action=argparse.BooleanOptionalAction,
        ),
        Flag(
            "--policy-temperature",
            0.0,
            "with --targets lookahead or sweep: policy target softmax(-moves to go after each move / T) from the "
            "children's values, "
            "T in moves; 0 = one-hot on the best move",
            type=Cli.nonnegative_float,
        ),
        Flag(
            "--sweep-plies",
            1,
            "with --targets sweep: Bellman backups over the table of class values per iteration (a full-width "
            "search this many moves deep on the network's values)",
            type=Cli.int_in(1, MAX_DISTANCE, "every position is within 14 moves"),
        ),
        Flag(
            "--states-per-iter",
            32768,
            "with --targets lookahead, adi or scramble: states generated and trained on per iteration; with "
            "--targets sweep: scramble-path states added to the classes each iteration",
            type=Cli.states,
        ),
        Flag(
            "--value-weight",
            VALUE_WEIGHT,
            "weight of the value MSE in the loss (original 1.0; the policy's is 1.2)",
            type=Cli.positive_float,
        ),
        Flag(
            "--value-loss",
            "mse",
            "'mse' = MSE of the value after its tanh (original); 'logit' = the same error measured through the "
            "value before its tanh, which keeps a gradient where the tanh saturates; 'bce' = cross-entropy of (1+v)/2 "
            "to (1+z)/2, whose gradient before the tanh is v - z everywhere (Train_Network.alphazero_loss); "
            "'distance' = cross-entropy of a --distance-classes network's distance head with the target's distance",
            choices=list(VALUE_LOSSES),
        ),
        Flag(
            "--distance-classes",
            0,
            "0 = a scalar value head (original); K > 0 = a value head that classifies the moves to solved into "
            "0..K-1, read as the value 1 - 0.03 E[d] (needs --value-loss distance)",
            type=Cli.int_in(0, 100, "distance classes"),
        ),
        Flag(
            "--lr-schedule",
            "constant",
            "'constant' = --lr every iteration (original); 'cosine' = --lr decayed to --lr-end over the run's "
            "--num-iters, 'cosine-time' = over its --time-budget (the minutes trained so far), after --warmup-iters "
            "iterations of linear warm-up",
            choices=list(LR_SCHEDULES),
        ),
        Flag("--lr-end", 1e-5, "with --lr-schedule cosine: the last iteration's rate", type=Cli.positive_float),
        Flag(
            "--warmup-iters",
            0,
            "iterations of linear learning-rate warm-up (0 = none)",
            type=Cli.int_in(0, 1_000_000, "iterations"),
        ),
        Flag(
            "--time-budget",
            0.0,
            "minutes of training wall time (every session of a resumed run together) after which no new iteration "
            "starts; 0 = none, --num-iters only",
            type=Cli.nonnegative_float,
        ),
    ],
    "final evaluation (solve rate by scramble length)": [
        Flag("--eval-min-len", 1, "shortest scramble evaluated", type=Cli.scramble_len),
        Flag("--eval-max-len", None, "longest scramble evaluated (default: 20; 26 for the 3x3)", type=Cli.scramble_len),
        Flag("--eval-runs", 100, "episodes per scramble length", type=Cli.episodes),
        Flag("--eval-sims", EVAL_SIMULATIONS, "MCTS simulations per move in the evaluation", type=Cli.simulations),
        Flag(
            "--eval-max-steps",
            None,
            f"moves allowed per evaluation episode (default: {MAX_MOVES}; "
            f"{PUZZLES['3x3'].default_max_moves} for the 3x3)",
            type=Cli.move_limit,
        ),
        Flag(
            "--eval-solver",
            None,
            "how the evaluation solves (Solvers.py; default: mcts, the original; beam for the 3x3, ranked by the "
            "policy after --targets scramble, else by the value)",
            choices=list(SOLVER_NAMES),
        ),
        Flag("--skip-eval", False, "do not run the evaluation at the end", action="store_true"),
    ],
    "run": [
        add_device_flag,
        Flag(
            "--snapshot-every",
            0,
            "keep a copy of the model every K iterations (<checkpoint less .pt>_iterNNNN.pt; 0 = none)",
            type=Cli.int_in(0, 10**6, "iterations"),
        ),
        Flag(
            "--threads",
            0,
            "torch's CPU threads (0 = torch's default, one per core; --recipe alphazero: 1, because its batches "
            "of 200 episodes run faster on one thread than on two, docs/alphazero_selfplay.md)",
            type=Cli.int_in(0, 1024, "threads"),
        ),
        Flag(
            "--precision",
            "fp32",
            Precision.help_text("training", "about twice the states a second"),
            choices=list(Precision.PRECISIONS),
        ),
        Workers.add_arguments,
        Flag("--seed", 0, "seed of every random choice (scrambles, sampling, shuffling, init)", type=Cli.seed),
        Flag(
            "--checkpoint",
            None,
            "model file (bare state_dict); the training state is saved beside it (default: rubik_policy_value.pt; "
            "rubik3x3_policy_value.pt for the 3x3)",
        ),
        Flag(
            "--log-dir",
            None,
            "folder of metrics.json, charts and TensorBoard events (default: training_logs; training_logs_3x3 for "
            "the 3x3)",
        ),
        Flag(
            "--fresh",
            False,
            "start a new run from random weights even if a checkpoint or saved state exists",
            action="store_true",
        ),
        Flag(
            "--progress",
            None,
            "progress bars (default: when stderr is a terminal)",
            action=argparse.BooleanOptionalAction,
        ),
    ],
}


#: Flags of experiments that no --recipe uses (their results: docs/experiments.md, docs/sweep_recipe.md):
#: --help lists them last, under their own heading, rather than among the recipe's flags.
EXPERIMENT_FLAGS = ("--depth-bound", "--double-estimate", "--canonical-orientation", "--sweep-plies")
FLAG_GROUPS["experiments (no --recipe uses them; docs/experiments.md)"] = [
    f for flags in FLAG_GROUPS.values() for f in flags if isinstance(f, Flag) and f.name in EXPERIMENT_FLAGS
]
for _title, _flags in list(FLAG_GROUPS.items())[:-1]:
    _flags[:] = [f for f in _flags if not (isinstance(f, Flag) and f.name in EXPERIMENT_FLAGS)]


def build_parser(description: str | None = None) -> Cli.ArgumentParser:
    """The parser of ``FLAG_GROUPS``, ``description`` (main.py's docstring) at the top of --help."""
    return Cli.parser_from_groups(FLAG_GROUPS, description)


def parse_args(argv=None, description: str | None = None) -> argparse.Namespace:
    """The flags of ``argv`` (default: the command line): a ``--recipe``'s values are the defaults
    that single flags override; ``--sims`` with one number is that number for every scramble length.
    Flags that do not work together end the process (one sentence on stderr, exit status 2)."""
    parser = build_parser(description)
    known, _ = parser.parse_known_args(argv)
    if known.recipe is not None:
        parser.set_defaults(**RECIPES[known.recipe])
    args = parser.parse_args(argv)
    if args.targets not in SEED_TARGETS and not known.walk_len:
        args.walk_len = 0  # a recipe's walk length is for its own targets: another --targets drops it
    puzzle = get_puzzle(args.puzzle)
    fill_puzzle_defaults(args, puzzle)
    for ok, message in [*puzzle_checks(args, puzzle), *flag_checks(args)]:
        if not ok:
            parser.error(message)
    args.sims = args.sims * 3 if len(args.sims) == 1 else args.sims  # one number: every scramble length
    return args


def fill_puzzle_defaults(args: argparse.Namespace, puzzle) -> None:
    """The defaults that depend on ``puzzle`` (a ``Puzzles.Puzzle``), where no flag or recipe gave one:
    the checkpoint, the log folder and the final evaluation's longest scramble, moves and solver."""
    for key, default in (
        ("checkpoint", puzzle.checkpoint),
        ("log_dir", puzzle.log_dir),
        ("eval_max_len", puzzle.eval_max_len),
        ("eval_max_steps", puzzle.default_max_moves),
        ("eval_solver", puzzle.default_solver),
    ):
        if getattr(args, key) is None:
            setattr(args, key, default)


def puzzle_checks(args: argparse.Namespace, puzzle) -> list[tuple[bool, str]]:
    """``(ok, message)`` for each flag that needs the 2x2's machinery; none for the 2x2 itself."""
    if puzzle.name == "2x2":
        return []
    two_by_two = [
        (args.targets in TARGETS_3X3, f"--targets {args.targets}"),
        (not args.canonical_orientation, "--canonical-orientation"),
        (not args.canonical_symmetry, "--canonical-symmetry"),
        (not args.double_estimate, "--double-estimate"),
    ]
    return [
        (
            ok,
            f"{flag} is the 2x2's so far (the sweep and the cube's symmetries): train the {puzzle.name} with "
            f"--targets {', '.join(TARGETS_3X3[:-1])} or {TARGETS_3X3[-1]} (--recipe 3x3: diffusion)",
        )
        for ok, flag in two_by_two
    ]


def flag_checks(args: argparse.Namespace) -> list[tuple[bool, str]]:
    """``(ok, message)`` for every rule between flags, first to last: the first broken one is the error."""
    return [
        (args.lr_end > 0 and args.warmup_iters >= 0, "--lr-end must be positive and --warmup-iters 0 or more"),
        (
            args.lr_schedule != "cosine-time" or args.time_budget > 0,
            "--lr-schedule cosine-time anneals over the --time-budget: give one",
        ),
        (
            args.walk_len == 0 or args.targets in SEED_TARGETS,
            "--walk-len is for --targets adi, scramble or diffusion",
        ),
        (
            not (args.value_loss == "distance" and args.targets == "diffusion" and args.walk_len)
            or args.distance_classes > args.walk_len,
            "--distance-classes must exceed --walk-len: class k holds the walks of k moves",
        ),
        (
            args.distance_classes != 1,
            "--distance-classes 1 is a head whose one class always wins: its value is always 1 and its loss always "
            "0, so it learns nothing; give 0 (a scalar value) or at least 2",
        ),
        (args.num_iters >= 1, "--num-iters must be at least 1"),
        (args.episodes_per_iter >= 1, "--episodes-per-iter must be at least 1"),
        (args.epochs >= 1 and args.batch_size >= 1, "--epochs and --batch-size must be at least 1"),
        (args.lr > 0, "--lr must be positive"),
        (args.policy_temperature >= 0, "--policy-temperature must be 0 or more"),
        (
            args.states_per_iter >= 1 and args.value_weight > 0,
            "--states-per-iter must be at least 1 and --value-weight positive",
        ),
        (
            not args.double_estimate or args.targets == "lookahead",
            "--double-estimate works only with --targets lookahead",
        ),
        (args.window >= 1, "--window must be at least 1"),
        (args.start_scramble_len >= 1, "--start-scramble-len must be at least 1"),
        (args.max_episode_steps >= 1, "--max-episode-steps must be at least 1"),
        (min(args.sims) >= 1 and args.eval_sims >= 1, "simulation counts must be at least 1"),
        (len(args.sims) in (1, 3), "--sims takes one number or three"),
        (
            args.value_target not in SEARCH_VALUE_TARGETS or args.search == "gumbel",
            f"--value-target {args.value_target} reads the values of --search gumbel",
        ),
        (args.search == "puct" or args.targets == "selfplay", "--search gumbel plays self-play: --targets selfplay"),
        (
            args.search == "puct" or (args.workers == 1 and args.backend == "local"),
            "--search gumbel plays its episodes in this process: leave --workers and --backend out",
        ),
        (min(args.temps) > 0, "temperatures must be positive"),
        (1 <= args.eval_min_len <= args.eval_max_len, "--eval-min-len must be between 1 and --eval-max-len"),
        (args.eval_runs >= 1 and args.eval_max_steps >= 1, "--eval-runs and --eval-max-steps must be at least 1"),
    ]
