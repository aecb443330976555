"""Compare the shipped model and our rebuild of the original recipe with the original
project's published curves and evaluation.

    python docs/compare_with_original.py            # the defaults below: writes pretrained/comparison_with_original.png

Reads the original's ``seed_training_metrics.json`` and ``seed_eval_scramble_result.json``
(``--original``), the run trained with the original recipe (``--rebuild``) and the shipped
run (``--shipped``); each run folder holds ``eval_scramble_result.json`` and
``eval_by_distance.json``, the rebuild's also ``metrics.json``. Prints two markdown tables
(by scramble length, by true distance) and draws one 2x2 figure: the self-play solve rate
during training (original vs rebuild: the faithfulness check), and the evaluations by
scramble length and by distance.
The shipped run's own training curves are in its folder (``training_metrics.png``).
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
from run import Cli  # noqa: E402
from run.Run_IO import OutputError, check_writable  # noqa: E402


def load(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        sys.exit(Cli.fail(f"cannot read {path} ({exc.__class__.__name__})."))


def pct(rate, decimals: int = 0) -> str:
    return "" if rate is None else f"{100 * rate:.{decimals}f}%"


def num(value, fmt=".2f") -> str:
    return "" if value is None else format(value, fmt)


def mean_rate(rows) -> float | None:
    rates = [r["solve_rate"] for r in rows]
    return sum(rates) / len(rates) if rates else None


def mean_ratio(rows) -> float | None:
    """Mean moves/optimal over all solved episodes (each length weighted by its solved count)."""
    pairs = [
        (r["mean_ratio_to_optimal"], r.get("solved", 1)) for r in rows if r.get("mean_ratio_to_optimal") is not None
    ]
    total = sum(w for _, w in pairs)
    return sum(x * w for x, w in pairs) / total if total else None


# Long by design: the note's two tables and its figure, printed in the order docs/experiments.md quotes them.
def compare(args: argparse.Namespace) -> None:
    """Print the two tables and write the figure ``args.out`` from the result files of the three runs."""
    orig_m = load(os.path.join(args.original, "seed_training_metrics.json"))
    orig_e = {r["scramble_len"]: r for r in load(os.path.join(args.original, "seed_eval_scramble_result.json"))}
    runs = {}
    for name, folder in (("rebuild", args.rebuild), ("shipped", args.shipped)):
        runs[name] = {
            "scramble": {r["scramble_len"]: r for r in load(os.path.join(folder, "eval_scramble_result.json"))},
            "distance": load(os.path.join(folder, "eval_by_distance.json")),
        }
    reb, shp = runs["rebuild"], runs["shipped"]
    reb["metrics"] = load(os.path.join(args.rebuild, "metrics.json"))  # its training curve is the faithfulness check

    print(
        "| scramble length | original (published) | original recipe (ours) | shipped model | moves / optimal: original recipe (ours) | moves / optimal: shipped |"  # noqa: E501
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in sorted(shp["scramble"]):
        r = reb["scramble"].get(n, {})
        print(
            f"| {n} | {pct(orig_e.get(n, {}).get('solve_rate'))} | {pct(r.get('solve_rate'))} | {pct(shp['scramble'][n]['solve_rate'])} | "  # noqa: E501
            f"{num(r.get('mean_ratio_to_optimal'))} | {num(shp['scramble'][n].get('mean_ratio_to_optimal'))} |"
        )
    print(
        f"| all | {pct(mean_rate(orig_e.values()), 1)} | {pct(mean_rate(reb['scramble'].values()), 1)} | {pct(mean_rate(shp['scramble'].values()), 1)} | "  # noqa: E501
        f"{num(mean_ratio(reb['scramble'].values()))} | {num(mean_ratio(shp['scramble'].values()))} |"
    )
    print()
    rows = {name: {r["distance"]: r for r in run["distance"]["by_distance"]} for name, run in runs.items()}
    dists = sorted(rows["shipped"])
    print("| distance | " + " | ".join(str(d) for d in dists) + " | all |")
    print("| --- |" + " ---: |" * (len(dists) + 1))
    for name, label in (("rebuild", "original recipe: solved"), ("shipped", "shipped: solved")):
        overall = runs[name]["distance"]["overall"]
        print(
            f"| {label} | "
            + " | ".join(pct(rows[name].get(d, {}).get("solve_rate")) for d in dists)
            + f" | {100 * overall['solve_rate']:.1f}% |"
        )
        print(
            f"| {label.split(':')[0]}: moves / optimal | "
            + " | ".join(num(rows[name].get(d, {}).get("mean_ratio_to_optimal")) for d in dists)
            + f" | {num(overall.get('mean_ratio_to_optimal'))} |"
        )

    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    ax = axes[0, 0]
    ax.plot(orig_m["iterations"], [100 * r for r in orig_m["solve_rates"]], label="original (published)")
    ax.plot(
        reb["metrics"]["iterations"],
        [100 * r for r in reb["metrics"]["solve_rates"]],
        label="original recipe (ours)",
        alpha=0.8,
    )
    ax.set(title="Self-play solve rate while training", xlabel="iteration", ylabel="%")
    ax = axes[0, 1]
    lens = sorted(shp["scramble"])
    width = 0.27
    for k, (label, table) in enumerate(
        (
            ("original (published)", orig_e),
            ("original recipe (ours)", reb["scramble"]),
            ("shipped model", shp["scramble"]),
        )
    ):
        ax.bar(
            [x + (k - 1) * width for x in lens],
            [100 * table.get(x, {}).get("solve_rate", 0) for x in lens],
            width,
            label=label,
        )
    ax.set(
        title="Solve rate by scramble length (1000 simulations per move)",
        xlabel="scramble length",
        ylabel="%",
        ylim=(80, 101),
        xticks=lens,
    )
    for k, (label, name) in enumerate((("original recipe (ours)", "rebuild"), ("shipped model", "shipped"))):
        axes[1, 0].bar(
            [d + (k - 0.5) * 0.4 for d in dists],
            [100 * rows[name].get(d, {}).get("solve_rate", 0) for d in dists],
            0.4,
            label=label,
        )
        axes[1, 1].plot(
            dists,
            [rows[name].get(d, {}).get("mean_ratio_to_optimal") or float("nan") for d in dists],
            "o-",
            label=label,
        )
    sims = shp["distance"].get("settings", {}).get("num_simulations", "")
    axes[1, 0].set(
        title=f"Solve rate by true distance ({sims} simulations per move)",
        xlabel="optimal moves",
        ylabel="%",
        ylim=(0, 101),
    )
    axes[1, 1].axhline(1.0, color="gray", lw=1, ls="--")
    axes[1, 1].set(title="Moves played / optimal moves (solved positions)", xlabel="optimal moves", ylabel="ratio")
    for ax in axes.flat:
        ax.grid(alpha=0.3)
        ax.legend(loc="lower left" if ax in (axes[0, 1], axes[1, 0]) else "best")
    axes[1, 0].set_xticks(dists)
    fig.tight_layout()
    save_figure(fig, args.out)
    print(f"\nSaved {args.out}.")


def main(argv=None) -> int:
    p = Cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--original",
        type=Cli.nonempty_path,
        default="../shared/anchors",
        help="folder with the original's seed_training_metrics.json and seed_eval_scramble_result.json",
    )
    p.add_argument(
        "--rebuild",
        type=Cli.nonempty_path,
        default="pretrained/original_recipe",
        help="run folder of our model trained with the original recipe",
    )
    p.add_argument(
        "--shipped",
        type=Cli.nonempty_path,
        default="pretrained/symmetry_lookahead",
        help="run folder of the lookahead model (shipped before the exact recipe)",
    )
    p.add_argument(
        "--out", type=Cli.nonempty_path, default="pretrained/comparison_with_original.png", help="PNG to write"
    )
    args = p.parse_args(argv)
    try:
        check_writable(args.out)  # before the work, not after it
    except OutputError as exc:
        return Cli.fail(exc)
    try:
        compare(args)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:  # valid JSON of another shape
        return Cli.fail(f"a result file does not hold what this comparison reads ({type(exc).__name__}: {exc}).")
    return 0


if __name__ == "__main__":
    Cli.run_script(main)
