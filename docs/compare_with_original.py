"""Compare a training run and its evaluation with the original project's published ones.

    python docs/compare_with_original.py --run pretrained/training_logs \
        --original ../shared/anchors --out pretrained/comparison_with_original.png

Prints a markdown table (solve rate by scramble length, ours beside the original's) and
draws one figure: training loss and self-play solve rate against iteration, and the
evaluation's solve rate by scramble length, both projects overlaid.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from Plot_Scatter import save_figure  # noqa: E402


def load(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        sys.exit(f"error: cannot read {path} ({exc.__class__.__name__}).")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", default="pretrained/training_logs", help="folder with metrics.json and eval_scramble_result.json")
    p.add_argument("--original", default="../shared/anchors", help="folder with the original's seed_training_metrics.json and seed_eval_scramble_result.json")
    p.add_argument("--out", default="pretrained/comparison_with_original.png", help="PNG to write")
    args = p.parse_args()
    ours_m = load(os.path.join(args.run, "metrics.json"))
    ours_e = load(os.path.join(args.run, "eval_scramble_result.json"))
    seed_m = load(os.path.join(args.original, "seed_training_metrics.json"))
    seed_e = load(os.path.join(args.original, "seed_eval_scramble_result.json"))

    seed_rate = {r["scramble_len"]: r["solve_rate"] for r in seed_e}
    print("| scramble length | original (1000 sims) | this model (1000 sims) | mean moves | moves / optimal |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for r in ours_e:
        ratio = r.get("mean_ratio_to_optimal")
        length = r.get("mean_length")
        print(f"| {r['scramble_len']} | {100 * seed_rate.get(r['scramble_len'], float('nan')):.0f}% | {100 * r['solve_rate']:.0f}% | "
              f"{'' if length is None else f'{length:.2f}'} | {'' if ratio is None else f'{ratio:.3f}'} |")

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    for m, label in ((seed_m, "original"), (ours_m, "this run")):
        axes[0].plot(m["iterations"], m["losses"], label=label)
        axes[1].plot(m["iterations"], [100 * r for r in m["solve_rates"]], label=label, alpha=0.8)
    axes[0].set(title="Training loss", xlabel="iteration", ylabel="loss")
    axes[1].set(title="Self-play solve rate", xlabel="iteration", ylabel="%")
    lens = [r["scramble_len"] for r in ours_e]
    width = 0.4
    axes[2].bar([x - width / 2 for x in lens], [100 * seed_rate.get(x, 0) for x in lens], width, label="original")
    axes[2].bar([x + width / 2 for x in lens], [100 * r["solve_rate"] for r in ours_e], width, label="this model")
    axes[2].set(title="Evaluation: solve rate by scramble length", xlabel="scramble length", ylabel="%", ylim=(80, 101))
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    save_figure(fig, args.out)
    print(f"\nSaved {args.out}.")


if __name__ == "__main__":
    main()
