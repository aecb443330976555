"""How well a Go network knows the score: ``evaluate.py --game goN --score-games N``.

The agent plays N games against itself (its first ``--sample-moves`` moves drawn from the visit counts,
so that the games differ), and every position of every game is read by the network's score head. Its
prediction, the expected area margin for the player to move, is set against the margin that game
actually ended with, from the same side: the mean absolute error over all positions, at the empty board
and by stage of the game, beside a baseline that knows nothing of the position (the games' mean margin
from the player's side). The ownership head is checked the same way: the share of points whose predicted
owner (the sign of its output) is the final one. A network with a score belief also has the belief's
expected margin after komi checked against the same margins.

These are the targets the heads are trained on (``Go_Training``: the final margin over N, each point's
final owner), so the error here is the training error on games the network did not learn from.
"""

from __future__ import annotations

import numpy as np
import torch

from go.Arena import play_agent, play_game
from go.Go_Game import go_game
from go.Go_Net import expected_margin
from Plot_Scatter import pyplot, save_figure

#: Stages of the game for the error by stage: moves [start, stop) of the game (the last one open-ended).
STAGES = ((0, 1), (1, 5), (5, 10), (10, 20), (20, None))


def replay(game, moves: list[int]) -> tuple[np.ndarray, dict]:
    """The ``eval_input`` row of each position a move was played from ``(len(moves), width)`` int8, and the
    final state."""
    state, rows = game.initial_state(1), []
    for action in moves:
        rows.append(game.eval_input(state))
        state = game.step(state, np.array([action]))
    return (np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.int8)), state


def final_ownership(game, final_state: dict) -> np.ndarray:
    """``(N*N,)`` each point's final owner from Black's side (1 Black, -1 White, 0 neither), as trained."""
    return game.final_targets(game.eval_input(final_state))[1][0].astype(np.float64)


def read_heads(model, game, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The score head in points ``(B,)``, the ownership head ``(B, N*N)`` and, with a score belief, its
    expected margin after komi in points ``(B,)`` (else None), all for the player to move."""
    device = next(model.parameters()).device
    with torch.inference_mode():
        heads = model.heads(torch.from_numpy(game.encode(inputs)).to(device))
    score = heads["score"].float().reshape(-1).cpu().numpy().astype(np.float64) * game.size
    lead = expected_margin(heads, game.size).cpu().numpy().astype(np.float64) if "lead" in heads else None
    return score, heads["ownership"].float().cpu().numpy(), lead


def score_check(model, size: int, komi: float | None, games: int, sims: int, c_puct: float, *, symmetric: bool = False,
                sample_moves: int = 4, rng: np.random.Generator | None = None, device=None, precision: str = "fp32",
                progress: bool = False) -> dict:  # fmt: skip
    """Play ``games`` self-play games at ``komi`` (None: the board's) and measure the score and ownership
    heads on every position (module docstring). Raises ValueError for a network without them."""
    if not getattr(model, "has_score", False):
        raise ValueError("this network has no score head (train one with --score-heads, or --recipe go5-score).")
    game = go_game(size, komi, **model.game_options)
    agent = play_agent(
        model, sims, c_puct, symmetric, device=device, rng=rng, sample_moves=sample_moves, precision=precision
    )
    predicted, final, move_number, owner_hits, owner_points, margins, openings = [], [], [], 0, 0, [], set()
    beliefs = []
    from tqdm import tqdm

    for _ in tqdm(range(games), desc="score games", unit="game", disable=not progress):
        record = play_game(game, agent, agent)
        openings.add(tuple(record.moves))
        inputs, end = replay(game, record.moves)
        if len(inputs) == 0:
            continue
        to_play = inputs[:, -1].astype(np.float64)
        score, ownership, lead = read_heads(model, game, inputs)
        black_margin = float(record.score)
        if lead is not None:
            beliefs.append(lead)
        final_owner = final_ownership(game, end)
        predicted.append(score)
        final.append(to_play * black_margin)
        move_number.append(np.arange(len(inputs)))
        owner_hits += int((np.sign(ownership) == final_owner[None, :] * to_play[:, None]).sum())
        owner_points += ownership.size
        margins.append(black_margin)
    result = summarize(np.concatenate(predicted), np.concatenate(final), np.concatenate(move_number), {
        "komi": game.komi, "games": games, "distinct_games": len(openings), "simulations": sims,
        "sample_moves": sample_moves, "mean_black_margin": float(np.mean(margins)),
        "black_margins": margins, "game_lengths": [len(m) for m in move_number],
        "black_wins": int(np.sum(np.array(margins) > 0)),
        "ownership_accuracy": owner_hits / max(owner_points, 1),
    })  # fmt: skip
    if beliefs:  # the score belief's expected margin, set against the same final margins
        beliefs = np.concatenate(beliefs)
        result["belief_mae"] = float(np.abs(beliefs - np.concatenate(final)).mean())
        result["points"]["belief"] = beliefs.round(3).tolist()
    return result


def summarize(predicted: np.ndarray, final: np.ndarray, move_number: np.ndarray, facts: dict) -> dict:
    """The errors of ``score_check`` from every position's prediction and final margin (player to move's
    side) and its move number."""
    error = np.abs(predicted - final)
    # The baseline knows the games' mean margin (Black's side) and whose move it is, nothing else.
    to_play = np.where(move_number % 2 == 0, 1.0, -1.0)  # every game starts with Black
    baseline = np.abs(to_play * facts["mean_black_margin"] - final)
    stages = []
    for start, stop in STAGES:
        rows = (move_number >= start) & (move_number < (stop if stop is not None else np.inf))
        if rows.any():
            label = f"move {start + 1}" if stop == start + 1 else f"moves {start + 1}-{stop or ''}"
            stages.append({"moves": label.rstrip("-") + ("+" if stop is None else ""), "positions": int(rows.sum()),
                           "mae": float(error[rows].mean()), "baseline_mae": float(baseline[rows].mean())})  # fmt: skip
    return {
        **facts,
        "positions": int(len(error)),
        "mae": float(error.mean()),
        "baseline_mae": float(baseline.mean()),
        "mean_signed_error": float((predicted - final).mean()),
        "by_stage": stages,
        "points": {"predicted": predicted.round(3).tolist(), "final": final.tolist()},
    }


def summary_lines(result: dict) -> list[str]:
    """``score_check``'s result as printed lines."""
    lines = [
        f"komi {result['komi']:g}: {result['games']} games against itself ({result['distinct_games']} distinct, "
        f"Black won {result['black_wins']}, mean margin {result['mean_black_margin']:+.2f} for Black), "
        f"{result['positions']:,} positions",
        f"  score head: mean absolute error {result['mae']:.2f} points (knowing only the mean margin: "
        f"{result['baseline_mae']:.2f}); mean signed error {result['mean_signed_error']:+.2f}",
    ]
    for stage in result["by_stage"]:
        lines.append(f"    {stage['moves']:>10s}: {stage['mae']:.2f} (baseline {stage['baseline_mae']:.2f}), "
                     f"{stage['positions']:,} positions")  # fmt: skip
    if "belief_mae" in result:
        lines.append(f"  score belief: mean absolute error {result['belief_mae']:.2f} points (its expected margin)")
    lines.append(f"  ownership head: {100 * result['ownership_accuracy']:.1f}% of points' final owners right")
    return lines


def plot_score_check(result: dict, path: str) -> None:
    """The score head's prediction against the final margin, every position (one point each)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    predicted, final = np.array(result["points"]["predicted"]), np.array(result["points"]["final"])
    ax.scatter(final, predicted, s=6, alpha=0.25)
    low, high = float(min(final.min(), predicted.min())), float(max(final.max(), predicted.max()))
    ax.plot([low, high], [low, high], color="grey", lw=1, label="prediction = final margin")
    ax.set(xlabel="final area margin (player to move)", ylabel="score head's expected margin")
    ax.set_title(f"komi {result['komi']:g}, {result['games']} games: mean abs. error {result['mae']:.2f}")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    save_figure(fig, path)
