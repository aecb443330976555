"""Self-play throughput: all episodes in lockstep (Self_Play.play_episodes) against episodes
played one at a time with the one-tree reference search, as the original does.

Settings as the issue: 80 episodes, scramble length 12, 300 simulations, at most 10 moves,
greedy, random-weight network. Throughput = simulations per second over whole episodes,
every move's search counted. The reference is slow (about 800 simulations/s), so it plays
only ``--ref-episodes`` of the same episodes; its rate is per simulation, so the two
numbers compare directly. Rounds are interleaved; medians are reported.

Target (2-core CPU): batched >= 25x the reference.
"""

from __future__ import annotations

import argparse

import numpy as np

import common  # noqa: F401
from Action_MCTS import pick_action_from_mcts
from common import Cli, one_state_evaluator, random_net, timed
from reference_mcts import ReferenceMCTS
from Rubik2x2Env import Rubik2x2Env, batch_scramble
from Self_Play import play_episodes


def reference_episodes(model, start_cubes, sims, max_steps) -> int:
    """Play episodes one by one like the original; returns simulations run."""
    search = ReferenceMCTS(one_state_evaluator(model), num_simulations=sims)
    env = Rubik2x2Env(max_steps=max_steps)
    total = 0
    for cube in start_cubes:
        _, info = env.reset(options={"cube": cube})
        for _ in range(max_steps):
            visits = search.run(env.cube, info["action_mask"], env.last_action, env.face_count)
            total += sims
            _, _, terminated, truncated, info = env.step(pick_action_from_mcts(visits, "greedy"))
            if terminated or truncated:
                break
    return total


def main(argv=None) -> None:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--episodes", type=Cli.episodes, default=80, help="episodes played in lockstep")
    p.add_argument(
        "--ref-episodes", type=Cli.episodes, default=2, help="episodes the one-at-a-time reference plays per round"
    )
    p.add_argument("--scramble-len", type=Cli.scramble_len, default=12)
    p.add_argument("--sims", type=Cli.simulations, default=300, help="simulations per move")
    p.add_argument("--max-steps", type=Cli.move_limit, default=10, help="moves per episode")
    p.add_argument("--rounds", type=Cli.rounds, default=3, help="interleaved rounds (medians reported)")
    p.add_argument("--seed", type=Cli.seed, default=0)
    args = p.parse_args(argv)

    model = random_net(args.seed)
    starts, _ = batch_scramble(np.random.default_rng(args.seed), args.episodes, args.scramble_len)
    batched, cached, ref = [], [], []
    for r in range(args.rounds):
        res, t = timed(lambda: play_episodes(model, starts, args.max_steps, args.sims, "greedy"))
        batched.append(res.simulations / t)
        cached.append(1 - res.network_states / res.simulations)
        picks = starts[(r * args.ref_episodes) % len(starts) :][: args.ref_episodes]
        sims, t = timed(lambda: reference_episodes(model, picks, args.sims, args.max_steps))
        ref.append(sims / t)
        print(
            f"round {r + 1}/{args.rounds}: batched {batched[-1]:,.0f} sims/s, reference {ref[-1]:,.0f} sims/s",
            flush=True,
        )
    ratio = np.median([b / x for b, x in zip(batched, ref)])
    print()
    print(
        f"batched self-play ({args.episodes} episodes):  {np.median(batched):>9,.0f} sims/s  "
        f"(evaluation cache answered {100 * np.median(cached):.0f}% of leaf evaluations)"
    )
    print(f"one episode at a time (reference):     {np.median(ref):>9,.0f} sims/s")
    print(f"speed-up: {ratio:.1f}x  (target >= 25x)")


if __name__ == "__main__":
    Cli.run_script(main)
