"""A bar chart of a benchmark's table (`--chart PATH` of cpu.py and corpus.py): per workload, each
runner's speed-up over NumPy (NumPy's time over the runner's), one bar per runner, drawn from 1
(NumPy) on a log scale: right of the line is faster than NumPy, left slower. matplotlib draws it; a
benchmark asked for a chart without matplotlib installed stops before it measures anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import math


def add_option(parser: argparse.ArgumentParser) -> None:
    """The `--chart PATH` option (the file type from PATH's suffix: .png, .svg, .pdf)."""
    parser.add_argument("--chart", metavar="PATH", type=_chart_path,
                        help="also draw the speed-ups over NumPy as a bar chart into PATH (needs matplotlib)")


def _chart_path(path: str) -> str:
    if importlib.util.find_spec("matplotlib") is None:
        raise argparse.ArgumentTypeError("drawing a chart needs matplotlib (pip install matplotlib)")
    return path


def write(path: str, title: str, speedups: dict[str, dict[str, float]]) -> None:
    """Draw `speedups` ({workload: {runner: NumPy's time / runner's time}}) into `path`."""
    import matplotlib
    matplotlib.use("Agg")   # files only: no display needed
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    workloads = list(speedups)
    runners = list(dict.fromkeys(r for row in speedups.values() for r in row))
    band = 0.8 / len(runners)   # each workload's bars share 0.8 of a row
    fig, ax = plt.subplots(figsize=(8, 1.8 + len(workloads) * (0.1 + 0.13 * len(runners))))
    for i, runner in enumerate(runners):
        rows = [(w, speedups[name][runner]) for w, name in enumerate(workloads) if runner in speedups[name]]
        ys = [w + (i - (len(runners) - 1) / 2) * band for w, _ in rows]
        ax.barh(ys, [r - 1 for _, r in rows], band, left=1, label=runner, color=f"C{i}")
        for y, (_, r) in zip(ys, rows):   # the ratio at the bar's end, outside it
            ax.annotate(f"{r:.2f}x" if r < 10 else f"{r:.0f}x", (r, y), xytext=(3 if r >= 1 else -3, 0), textcoords="offset points",
                        ha="left" if r >= 1 else "right", va="center", fontsize=7)
    ax.axvline(1, color="black", linewidth=1)
    ax.set_xscale("log")
    ratios = [r for row in speedups.values() for r in row.values()]
    low, high = min(ratios + [1]), max(ratios + [1])
    ax.set_xlim(low / 2.5, high * 2.5)   # room for the labels
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.grid(axis="x", which="major", alpha=0.4)
    ax.set_yticks(range(len(workloads)), workloads)
    ax.invert_yaxis()   # the table's first workload at the top
    ax.set_xlabel("speed-up over NumPy (NumPy's time / the runner's; log scale, 1x = NumPy)")
    ax.set_title(title, fontsize=9, pad=12 + 12 * math.ceil(len(runners) / 3))   # room for the legend
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
