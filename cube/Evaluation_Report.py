"""Charts and text tables of ``evaluate.py``'s results.

Charts (PNG, written atomically by ``Plot_Scatter.save_figure``, which also picks matplotlib's
file-only Agg backend): solve rate and solution length / optimal (or kociemba's, for the 3x3) by
scramble length (``plot_scramble_rows``, the original's bar chart beside the ratio), by true
distance (``plot_distance_data``) and for every position (``plot_all_positions``, with the
network's value read as moves). Tables: ``format_table`` and one builder per mode, as the
script prints them.
"""

from __future__ import annotations

from Plot_Scatter import pyplot, save_figure


def plot_all_positions(path: str, data: dict) -> str:
    """Three panels by true distance: solve rate (%), moves/optimal of the solved positions, and
    the network's value read as moves against the true distance (mean; share within 0.5)."""
    plt = pyplot()
    rows = [r for r in data["by_distance"] if r["distance"] > 0]
    xs = [r["distance"] for r in rows]
    fig, (ax_rate, ax_ratio, ax_value) = plt.subplots(1, 3, figsize=(18, 4.8))
    settings = data["settings"]
    _bars(ax_rate, xs, [100 * r["solve_rate"] for r in rows], "tab:green", "{:.1f}")
    ax_rate.set_ylim(0, 109)
    ax_rate.set_xlabel("true distance (optimal quarter turns)")
    ax_rate.set_ylabel("solve rate (%)")
    what = "every position" if settings["mode"] == "all" else f"{settings['positions']:,} positions"
    ax_rate.set_title(f"Solve rate by true distance\n({what}, {settings['solver']} solver)")
    _ratio_panel(ax_ratio, xs, [r.get("mean_ratio_to_optimal") for r in rows], "true distance (optimal quarter turns)")
    with_value = [r for r in rows if "value_moves_mean" in r]
    if with_value:
        d = [r["distance"] for r in with_value]
        ax_value.plot(d, [r["value_moves_mean"] for r in with_value], "o-", color="tab:purple", label="mean")
        ax_value.plot(d, d, "--", color="black", linewidth=1, label="exact")
        for r in with_value:
            ax_value.annotate(
                f"{100 * r['value_within_half_move']:.0f}%",
                (r["distance"], r["value_moves_mean"]),
                textcoords="offset points",
                xytext=(0, 6),
                ha="center",
                fontsize=7,
            )
        ax_value.set_xticks(xs)
        ax_value.legend(loc="upper left")
        ax_value.grid(alpha=0.3)
    else:
        ax_value.text(0.5, 0.5, "no network values", ha="center", va="center", transform=ax_value.transAxes)
    ax_value.set_xlabel("true distance (optimal quarter turns)")
    ax_value.set_ylabel("value read as moves, (1 - v) / 0.03")
    ax_value.set_title("Value as moves (labels: share within 0.5 of the truth)")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def plot_rate_and_ratio(
    path: str, xs, rows, xlabel: str, color: str, title: str, overall_ratio=None, reference: str = "optimal"
) -> str:
    """Two panels saved as ``path``: solve rate (%) and mean length/``reference`` (optimal, or
    kociemba for the 3x3) of ``rows`` against ``xs``."""
    plt = pyplot()
    fig, (ax_rate, ax_ratio) = plt.subplots(1, 2, figsize=(13, 4.8))
    _bars(ax_rate, xs, [100 * r["solve_rate"] for r in rows], color, "{:.0f}")
    ax_rate.set_ylim(0, 109)
    ax_rate.set_xlabel(xlabel)
    ax_rate.set_ylabel("solve rate (%)")
    ax_rate.set_title(title)
    _ratio_panel(ax_ratio, xs, [r.get(f"mean_ratio_to_{reference}") for r in rows], xlabel, reference)
    if overall_ratio is not None:
        ax_ratio.set_title(f"Solution length / {reference} (solved episodes; overall {overall_ratio:.2f})")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def plot_scramble_rows(path: str, rows: list[dict], settings: dict | None = None) -> str:
    """The original's bar chart of solve rate (%) by scramble length, beside the mean
    length/optimal ratio of the solved episodes (length/kociemba for rows that have it: the 3x3)."""
    return plot_rate_and_ratio(
        path,
        [r["scramble_len"] for r in rows],
        rows,
        "scramble length (random moves)",
        "tab:blue",
        "Solve rate by scramble length" + _settings_text(settings),
        reference="kociemba" if rows and "mean_ratio_to_kociemba" in rows[0] else "optimal",
    )


def plot_distance_data(path: str, data: dict, show_settings: bool = True) -> str:
    """Solve rate (%) and mean length/optimal by true distance, from ``evaluate_by_distance``'s data."""
    rows = data["by_distance"]
    return plot_rate_and_ratio(
        path,
        [r["distance"] for r in rows],
        rows,
        "true distance (optimal quarter turns)",
        "tab:green",
        "Solve rate by true distance"
        + _settings_text(data["settings"] if show_settings else None, "positions at most per distance"),
        data["overall"].get("mean_ratio_to_optimal"),
    )


# --------------------------------------------------------------------------- chart helpers
def _settings_text(settings: dict | None, each: str = "episodes each") -> str:
    if not settings:
        return ""
    puzzle = f"{settings['puzzle']}, " if "puzzle" in settings else ""  # only beside the 2x2, the default
    return (
        f"\n({puzzle}{settings['runs_per_distance']} {each}, {solver_text(settings.get('solver', 'mcts'), settings['num_simulations'])}, "  # noqa: E501
        f"{settings['max_episode_steps']} moves max)"
    )


def solver_text(solver: str, num_simulations: int) -> str:
    """How a chart or a line names the solver: ``greedy MCTS 1000 sims``, ``beam solver``..."""
    if solver == "mcts":
        return f"greedy MCTS {num_simulations} sims"
    if solver == "gumbel":
        return f"greedy Gumbel search {num_simulations} sims"
    return f"{solver} solver"


def _bars(ax, xs, ys, color, label_format, all_xs=None) -> None:
    bars = ax.bar(xs, ys, color=color, alpha=0.85)
    ax.bar_label(bars, labels=[label_format.format(y) for y in ys], fontsize=7, padding=1)
    all_xs = xs if all_xs is None else all_xs
    ax.set_xticks(all_xs)
    ax.set_xlim(min(all_xs) - 0.6, max(all_xs) + 0.6)  # both panels share the x range
    ax.grid(axis="y", alpha=0.3)


def _ratio_panel(ax, xs, ratios, xlabel: str, reference: str = "optimal") -> None:
    """Mean solution length / optimal (or kociemba's) length; a missing value (nothing solved) is no bar."""
    present = [(x, r) for x, r in zip(xs, ratios) if r is not None]
    if present:
        _bars(ax, [x for x, _ in present], [r for _, r in present], "tab:orange", "{:.2f}", all_xs=xs)
        ax.set_ylim(0, max(1.2, 1.12 * max(r for _, r in present)))
    else:
        ax.text(0.5, 0.5, "no solved episodes (or no length data)", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks(xs)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label=reference)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"moves played / {reference} moves")
    ax.set_title(f"Solution length / {reference} (solved episodes)")
    ax.legend(loc="lower right")


# --------------------------------------------------------------------------- tables
def format_table(headers: list[str], rows: list[list], left: tuple[int, ...] = ()) -> str:
    """A plain text table: columns right-aligned except those in ``left`` (move strings)."""
    cells = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values) -> str:
        return "  ".join(
            v.ljust(w) if i in left else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def cell(value) -> str:
    """A table cell: ``-`` for None, two decimals for a float, else ``str``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def pct(rate: float) -> str:
    """A rate as a percentage with one decimal: ``0.5`` -> ``50.0%``."""
    return f"{100 * rate:.1f}%"


# --------------------------------------------------------------------------- the tables of each mode
def all_positions_table(rows: list[dict]) -> str:
    """The ``by_distance`` rows of ``evaluate_all_positions`` (value columns ``-`` without a network)."""
    return format_table(
        [
            "distance",
            "positions",
            "solved",
            "solve rate",
            "moves/optimal",
            "value moves",
            "max error",
            "within 0.5",
            "mean nodes",
        ],
        [
            [
                r["distance"],
                r["positions"],
                r["solved"],
                pct(r["solve_rate"]),
                r["mean_ratio_to_optimal"],
                r.get("value_moves_mean"),
                r.get("value_max_error"),
                None if "value_within_half_move" not in r else pct(r["value_within_half_move"]),
                r.get("mean_nodes"),
            ]
            for r in rows
        ],
    )


def scramble_records_table(records: list[dict], ref: str) -> str:
    """One line per record of ``solve_scrambles`` or ``solve_uniform``; ``ref``: the column of
    the reference length (``optimal`` or ``kociemba``)."""
    return format_table(
        ["line", "scramble", "solved", "moves", ref, "solution"],
        [
            [r["line"], r["scramble"], "yes" if r["solved"] else "no", r["length"], r[ref], r["solution"] or "(none)"]
            for r in records
        ],
        left=(1, 5),
    )


def distance_table(rows: list[dict]) -> str:
    """The ``by_distance`` rows of ``evaluate_by_distance``."""
    return format_table(
        ["distance", "positions", "episodes", "solved", "solve rate", "mean moves", "moves/optimal"],
        [
            [
                r["distance"],
                r["positions"],
                r["episodes"],
                r["solved"],
                pct(r["solve_rate"]),
                r["mean_length"],
                r["mean_ratio_to_optimal"],
            ]
            for r in rows
        ],
    )


def scramble_range_table(rows: list[dict], ref: str) -> str:
    """The rows of ``evaluate_scramble_range``, measured against ``ref`` (``optimal`` or ``kociemba``)."""
    return format_table(
        ["scramble len", "episodes", "solved", "solve rate", "mean moves", f"mean {ref}", f"moves/{ref}"],
        [
            [
                r["scramble_len"],
                r["episodes"],
                r["solved"],
                pct(r["solve_rate"]),
                r["mean_length"],
                r[f"mean_{ref}"],
                r[f"mean_ratio_to_{ref}"],
            ]
            for r in rows
        ],
    )
