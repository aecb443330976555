"""The named presets of ``main.py --recipe``: each recipe is data, the flag values (as argparse
destinations) that work together, and ``recipe_text`` writes it as the flags it sets (for --help).
A recipe only changes defaults: flags given on the command line still override it."""

from __future__ import annotations

#: The value sweep (Value_Sweep.py): every class of positions up to symmetry each iteration.
_SWEEP = dict(
    targets="sweep",
    canonical_symmetry=True,
    keep_optimizer=True,
    value_loss="logit",
    value_weight=30.0,
    policy_temperature=0.5,
    states_per_iter=65536,
    start_scramble_len=20,
    epochs=2,
    batch_size=1024,
    lr=5e-4,
    lr_schedule="cosine",
    lr_end=1e-5,
    warmup_iters=2,
    num_iters=40,
    eval_sims=200,
)
#: Named presets (``--recipe``): flag values, as argparse destinations, that work together.
RECIPES = {
    "sweep": _SWEEP,
    # The sweep with a distance-classifying value head, value weight 2, 85 iterations: why each,
    # docs/design_notes.md ("--recipe exact").
    "exact": dict(
        _SWEEP,
        value_loss="distance",
        distance_classes=20,
        value_weight=2.0,
        lr=1e-3,
        warmup_iters=1,
        num_iters=85,
    ),
    "alphazero": dict(
        targets="selfplay",
        search="gumbel",
        sims=[32, 32, 32],
        value_target="bootstrap",
        bootstrap_steps=4,
        search_value="best",
        canonical_symmetry=True,
        value_loss="bce",
        value_weight=30.0,
        keep_optimizer=True,
        lr=1e-3,
        episodes_per_iter=200,
        epochs=2,
        time_budget=90.0,
        num_iters=100_000,
        eval_sims=200,
        threads=1,
    ),
    # The 3x3 on a 2-core CPU in an hour (docs/puzzles.md): CayleyPy's random-walk lengths,
    # every walk length 1..26 (the 3x3's diameter in quarter turns) from the first iteration,
    # large batches of fresh states (no replay: each state is seen once), a first layer that reads
    # cubie colour pairs (Pair_Input), a distance head that reads the expected walk length, and a
    # learning rate annealed over the time budget.
    "3x3": dict(
        puzzle="3x3",
        targets="diffusion",
        walk_len=26,
        hidden_sizes=[1024, 256, 256, 256],
        input="pairs",
        value_loss="distance",
        distance_classes=27,
        value_weight=2.0,
        keep_optimizer=True,
        precision="auto",
        states_per_iter=524_288,
        epochs=1,
        batch_size=2048,
        lr=1e-3,
        lr_schedule="cosine-time",
        lr_end=2e-5,
        warmup_iters=2,
        time_budget=60.0,
        num_iters=1_000_000,
        start_scramble_len=8,
        window=4,
        episodes_per_iter=200,
        max_episode_steps=60,
        eval_runs=10,
        eval_max_len=26,
        eval_max_steps=40,
    ),
}


# The 3x3 recipe for 8 hours (issue 49): its loss still fell at the end of the hour (docs/puzzles.md), and
# its cosine-time schedule stretches over whatever budget it is given. Resumable across sessions. The shipped
# 3x3 model's recipe (its results against the hour's: docs/puzzles.md, "`--recipe 3x3-long`").
RECIPES["3x3-long"] = dict(RECIPES["3x3"], time_budget=480.0)


#: Go presets (``main.py --game goN --recipe NAME``): ``Go_Training.GoRecipe`` fields and run flags, as
#: argparse destinations (Go_Args.py); flags given on the command line override them.
GO_RECIPES = {
    # The seed's settings (SPEC section 10): GoRecipe's defaults, and its 100 iterations (within two hours).
    "minizero": dict(game="go5", num_iters=100, time_budget=120.0),
    # 32 lockstep games, 64 simulations at c_puct 1.0, a fallible side searching as the seed does, hopeless
    # positions training the value only: why each, docs/design_notes.md ("--recipe go5").
    "go5": dict(
        game="go5",
        games=32,
        buffer_min_games=128,
        augment=True,
        simulations=64,
        c_puct=1.0,
        sampled_side=0.5,
        sampled_simulations=30,
        sampled_c_puct=0.3,
        sampled_temperature=0.0,
        hopeless=0.6,
        lr_milestones=[11000, 15500],
        gate_games=0,
        time_budget=120.0,
    ),
    # go5 on 7x7 for the issue's 3 hours, without go5's seed-strength sampled search and hopeless (the 7x7 run
    # came before them, and its White holds without them: docs/go.md). 100 SGD steps an iteration: the shipped
    # run's games had 1.4x go5's moves and its iterations 2.6x the time (about a minute on one thread at 64
    # simulations), so each new sample was drawn ~1.6 times (go5: ~1.15), and its 15,700 steps put the drops at
    # 70% and 99%.
    "go7": dict(
        game="go7",
        games=32,
        buffer_min_games=128,
        augment=True,
        simulations=64,
        c_puct=1.0,
        sampled_side=0.5,
        train_steps=100,
        lr_milestones=[11000, 15500],
        gate_games=0,
        time_budget=180.0,
    ),
}


# go5 with the komi as an input (each game's komi drawn around the fair 25), score and ownership heads, and a
# tenth of the search's value from the expected margin (issue 48; docs/go.md, "Komi and score").
# Its learning rate drops at 60% and 85% of the time budget, where go5's step milestones were meant to fall:
# its iterations take about twice go5's time (docs/go.md), and step milestones would never be reached.
# No --hopeless: with komi drawn around 25, White is lost in every game at komi 24.5 or less, so hopeless
# kept White's policy out of training there and taught it only from games at 25.5 or more, which White
# wins by passing; the first run's White passed every move against GNU Go (docs/go.md, "The first go5-score run").
# The score utility already ranks lost moves, which was hopeless's reason.
# A score belief head gives the search its win value: the komi plane alone left the second run's network
# valuing White after C3 the same at komi 24.5 and 25.5 (docs/go.md, "The second go5-score run").
GO_RECIPES["go5-score"] = dict(
    GO_RECIPES["go5"], komi_input=True, komi_spread=2.0, score_heads=True, score_utility=0.1,
    score_belief=True, lr_milestones=[], lr_drops=[0.6, 0.85], hopeless=0.0,
)  # fmt: skip
# The same on 7x7 around its fair komi of 9: one network for komi 8.5 (Black wins) and 9.5 (White wins).
# In bfloat16 where the CPU multiplies it natively (a go9 move 1.35x as fast, docs/go.md, "bfloat16").
GO_RECIPES["go7-score"] = dict(
    GO_RECIPES["go7"], komi_input=True, komi_spread=2.0, score_heads=True, score_utility=0.1,
    score_belief=True, lr_milestones=[], lr_drops=[0.6, 0.85], precision="auto",
)  # fmt: skip

# The same on 9x9 around its fair komi of 7 (issue 48), for at most 8 hours of training, resumable across sessions
# (run the same command again). A 9x9 move costs about 1.7x a 7x7 one (81 points against 49) and a game has
# about 1.5x the moves, so an iteration takes about 2.5x go7's; 150 SGD steps an iteration keep go7's ~1.6
# draws per new position. Its learning rate drops at 60% and 85% of the 8 hours, as go7-score's.
GO_RECIPES["go9"] = dict(GO_RECIPES["go7-score"], game="go9", train_steps=150, time_budget=480.0)


def recipe_text(name: str, recipes: dict = RECIPES) -> str:
    """A recipe of ``recipes`` as the flags it sets, for --help."""
    flags = []
    for key, value in recipes[name].items():
        flag = "--" + key.replace("_", "-")
        text = " ".join(map(str, value)) if isinstance(value, list) else value
        flags.append(flag if value is True else f"{flag} {text}")
    return " ".join(flags)
