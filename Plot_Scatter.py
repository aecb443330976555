"""Training metrics: ``MetricsLogger`` keeps the original's metric lists, writes them to JSON
atomically, draws the training chart (one line chart per metric over the iterations), and mirrors
every value to TensorBoard; ``save_figure`` writes any chart atomically.

The file draws no scatter plot: ``Plot_Scatter.py`` is the original project's file name (its
design card lists it, and scripts written for it import ``MetricsLogger`` from here), so it stays."""

from __future__ import annotations

import os

from run.Run_IO import atomic_write, write_json

METRIC_KEYS = (
    "iterations", "losses", "policy_losses", "value_losses", "solve_rates", "scramble_lengths", "num_samples",
)  # fmt: skip


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (never needs a display), imported on first use:
    it takes about a fifth of a script's start (a second on a busy 2-core CPU), and most runs of a script
    (``--help``, a bad flag, each of the tests' subprocesses) draw nothing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str) -> None:
    """A matplotlib figure saved atomically as PNG, then closed."""
    plt = pyplot()
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=110, bbox_inches="tight"))
    plt.close(fig)


class MetricsLogger:
    """The original's metrics lists (``iterations, losses, policy_losses, value_losses,
    solve_rates, scramble_lengths, num_samples``), one entry per trained iteration."""

    def __init__(self, log_dir: str = "training_logs", tensorboard: bool = True, purge_step: int | None = None):
        self.log_dir = log_dir
        self.metrics: dict[str, list] = {k: [] for k in METRIC_KEYS}
        self._writer = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter  # here: slow to import, and only with tensorboard

            # purge_step drops events a resumed run is about to write again.
            self._writer = SummaryWriter(os.path.join(log_dir, "tensorboard"), purge_step=purge_step)

    def __getattr__(self, name):  # compatibility with the original: logger.losses, logger.solve_rates, ...
        metrics = self.__dict__.get("metrics", {})
        if name in metrics:
            return metrics[name]
        raise AttributeError(name)

    def log_iteration(self, iteration, loss, policy_loss, value_loss, solve_rate, scramble_len, num_samples, **scalars):
        values = (iteration, loss, policy_loss, value_loss, solve_rate, scramble_len, num_samples)
        for key, value in zip(METRIC_KEYS, values):
            self.metrics[key].append(value)
        self.log_scalars(
            iteration,
            {
                "losses/total": loss,
                "losses/policy": policy_loss,
                "losses/value": value_loss,
                "charts/solve_rate": solve_rate,
                "charts/scramble_len": scramble_len,
                "charts/num_samples": num_samples,
                **scalars,
            },
        )

    def log_scalars(self, step: int, scalars: dict) -> None:
        if self._writer is not None:
            for tag, value in scalars.items():
                if value is not None:
                    self._writer.add_scalar(tag, value, step)
            self._writer.flush()

    def log_hparams_text(self, args: dict) -> None:
        if self._writer is not None:
            table = "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in args.items())
            self._writer.add_text("hyperparameters", table)

    def save_json(self, filename: str = "metrics.json") -> str:
        path = os.path.join(self.log_dir, filename)
        write_json(path, self.metrics)
        return path

    def plot_all(self, filename: str = "training_metrics.png") -> str:
        """2x2 chart: total loss, solve rate (%), policy loss, value loss against iteration."""
        plt = pyplot()
        m = self.metrics
        fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
        panels = [
            ("Total loss", m["losses"], "loss"),
            ("Self-play solve rate (%)", [100 * r for r in m["solve_rates"]], "solve rate (%)"),
            ("Policy loss", m["policy_losses"], "cross-entropy"),
            ("Value loss", m["value_losses"], "MSE"),
        ]
        for ax, (title, ys, ylabel) in zip(axes.flat, panels):
            ax.plot(m["iterations"], ys, marker=".", linewidth=1.2)
            ax.set_title(title)
            ax.set_xlabel("iteration")
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
        if m["iterations"]:
            twin = axes[0, 1].twinx()  # the curriculum explains the dips in solve rate
            twin.step(m["iterations"], m["scramble_lengths"], where="post", color="tab:gray", alpha=0.6, linewidth=1)
            twin.set_ylabel("scramble length", color="tab:gray")
        fig.tight_layout()
        path = os.path.join(self.log_dir, filename)
        save_figure(fig, path)
        return path

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
