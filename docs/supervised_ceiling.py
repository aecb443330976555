"""How well can the original's network learn the cube at all? Train it on perfect labels.

    python docs/supervised_ceiling.py --steps 6600                      # from scratch
    python docs/supervised_ceiling.py --init runs/canon/rubik_policy_value.pt --steps 6600

A diagnostic, not a recipe (the shipped model never sees the solver): every batch is half
uniformly random positions, half prefixes of random 14-move scrambles, each labelled by the
optimal solver's table with its exact distance d (value target ``1 - 0.03 d``, as in
``--targets lookahead``) and a policy target spread evenly over the moves that bring it one
move closer. The loss is the project's (policy cross-entropy + ``--value-weight`` x value
MSE), Adam with a cosine-decayed learning rate, on a canonical-orientation network
(``--symmetry``: one that also reduces the 48 symmetries).

If such a network, given the true answer for every training state, still misreads far
positions by more than half a move, no choice of self-play or lookahead targets can make it
exact within the same compute: the bottleneck is fitting, not the targets. Every
``--log-every`` steps it prints, per true distance 1..14 on a fixed test set, the value's
RMS error in moves and how often the policy's top move is an optimal one.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import Optimal_Solver  # noqa: E402
from cube.Cube_Checkpoints import model_from_state  # noqa: E402
from cube.Lookahead_Targets import scramble_path_states  # noqa: E402
from cube.Puzzles import VALUE_PER_MOVE  # noqa: E402
from Policy_Value_Net import PolicyValueNet  # noqa: E402
from Rubik2x2Env import MOVE_PERMS, NUM_ACTIONS, NUM_STICKERS, batch_onehot  # noqa: E402
from run import Cli  # noqa: E402
from run.Checkpoints import load_state_dict, save_checkpoint  # noqa: E402
from run.Run_IO import CheckpointError, OutputError, check_writable  # noqa: E402
from Train_Network import alphazero_loss  # noqa: E402

DISTANCES = range(1, Optimal_Solver.MAX_DISTANCE + 1)


def exact_labels(solver, cubes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distances ``(n,)`` and policy targets ``(n, 12)``: uniform over the optimal moves."""
    dist = solver.batch_distance(cubes)
    children = cubes[:, MOVE_PERMS].reshape(-1, NUM_STICKERS)
    closer = (solver.batch_distance(children).reshape(-1, NUM_ACTIONS) == dist[:, None] - 1).astype(np.float32)
    closer[dist == 0] = 1.0
    return dist, closer / closer.sum(axis=1, keepdims=True)


@torch.no_grad()
def report(model, cubes: np.ndarray, dist: np.ndarray, pi: np.ndarray) -> str:
    """Per distance: value RMS error in moves / fraction whose top move is optimal."""
    model.eval()
    logits, value = model(torch.from_numpy(batch_onehot(cubes)))
    model.train()
    error = (1.0 - value.squeeze(-1).numpy()) / VALUE_PER_MOVE - dist
    optimal = pi[np.arange(len(cubes)), logits.argmax(dim=1).numpy()] > 0
    return " | ".join(
        f"{np.sqrt(np.mean(error[dist == d] ** 2)):.2f} / {optimal[dist == d].mean():.2f}" for d in DISTANCES
    )


# Long by design: the experiment's whole procedure (flags, data, training, the table) in the order the note
# tells it.
def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--init", type=Cli.nonempty_path, help="start from the weights of this checkpoint (default: a fresh network)"
    )
    p.add_argument(
        "--symmetry",
        action="store_true",
        help="the network also reduces the 48 symmetries (main.py --canonical-symmetry)",
    )
    p.add_argument("--steps", type=Cli.iterations, default=6600, help="training steps (batches)")
    p.add_argument("--batch-size", type=Cli.batch_size, default=1024, help="states per step")
    p.add_argument("--lr", type=Cli.positive_float, default=1e-3, help="peak Adam learning rate (cosine-decayed to 0)")
    p.add_argument(
        "--value-weight",
        type=Cli.positive_float,
        default=3000.0,
        help="weight of the value MSE, as main.py --value-weight",
    )
    p.add_argument(
        "--test-per-distance",
        type=Cli.episodes,
        default=300,
        help="test positions per distance (fewer where fewer exist)",
    )
    p.add_argument("--log-every", type=Cli.iterations, default=600, help="steps between reports")
    p.add_argument("--save", type=Cli.nonempty_path, help="write the trained network here")
    p.add_argument("--seed", type=Cli.seed, default=0, help="seed of the network, the training and the test positions")
    args = p.parse_args(argv)
    if min(args.steps, args.batch_size, args.test_per_distance, args.log_every) < 1 or args.lr <= 0:
        p.error("--steps, --batch-size, --test-per-distance, --log-every and --lr must be positive")
    torch.manual_seed(args.seed)
    try:
        if args.save:
            check_writable(args.save)  # before the training, not after it
        if args.init:
            model = model_from_state(
                load_state_dict(args.init), args.init, canonical_orientation=True, canonical_symmetry=args.symmetry
            )
        else:
            model = PolicyValueNet(canonical_orientation=True, canonical_symmetry=args.symmetry)
    except (CheckpointError, OutputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    solver = Optimal_Solver.get_solver()
    test_rng = np.random.default_rng([args.seed, 1])
    test = np.concatenate(
        [
            solver.random_cubes_at_distance(test_rng, d, min(args.test_per_distance, solver.count_at_distance(d)))
            for d in DISTANCES
        ]
    )
    test_dist, test_pi = exact_labels(solver, test)

    rng = np.random.default_rng(args.seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    kind = "48 symmetries" if model.symmetric else "canonical orientation"
    print(f"{args.init or 'fresh network'} ({kind}): {args.steps} steps of {args.batch_size} exactly labelled states")
    print("value RMS error in moves / share of positions whose top policy move is optimal, by true distance")
    print("| step | seconds | " + " | ".join(str(d) for d in DISTANCES) + " |")
    print("| ---: | ---: |" + " ---: |" * len(DISTANCES))
    print(f"| 0 | 0 | {report(model, test, test_dist, test_pi)} |", flush=True)
    start = time.time()
    half = args.batch_size // 2
    for step in range(1, args.steps + 1):
        for group in optimizer.param_groups:
            group["lr"] = args.lr * 0.5 * (1.0 + np.cos(np.pi * (step - 1) / args.steps))
        paths, _, _ = scramble_path_states(rng, args.batch_size - half, Optimal_Solver.MAX_DISTANCE)
        cubes = np.concatenate([solver.random_cubes(rng, half), paths[: args.batch_size - half]])
        dist, pi = exact_labels(solver, cubes)
        logits, value = model(torch.from_numpy(batch_onehot(cubes)))
        z = torch.from_numpy((1.0 - VALUE_PER_MOVE * dist).astype(np.float32))
        loss, _, _ = alphazero_loss(logits, value.squeeze(-1), torch.from_numpy(pi), z, value_weight=args.value_weight)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % args.log_every == 0 or step == args.steps:
            print(f"| {step} | {time.time() - start:.0f} | {report(model, test, test_dist, test_pi)} |", flush=True)
    if args.save:
        save_checkpoint(model, args.save)
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
