#!/usr/bin/python3
"""Plots the attention cost measured by apps/bench/run.sh (mha_scaling.csv) against n: one
self-attention layer (dim d = 64, 4 heads), forward + backward, time per sequence on log-log
axes, with the two terms of SEEDS §7's complexity table drawn as guides:
  O(n·d²)  the qkv and output projections: 4 n d² multiply-adds per sequence (forward)
  O(n²·d)  Q Kᵀ and A V: 2 n² d multiply-adds, more than the projections once n > 2d.

    /usr/bin/python3 apps/bench/plot_scaling.py mha_scaling.csv mha_scaling.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

D = 64


def load(path):
    rows = list(csv.DictReader(open(path)))
    series = {}
    for r in rows:
        series.setdefault(r["impl"], []).append((int(r["n"]), float(r["us_per_sequence"]), float(r["gflops"])))
    return {impl: sorted(v) for impl, v in series.items()}, rows[0]["threads"] if rows else "?"


def fit_linear_plus_quadratic(points):
    """Least squares for t(n) = a·n + b·n², weighted by 1/t² (relative error)."""
    s11 = s12 = s22 = r1 = r2 = 0.0
    for n, t, _ in points:
        w = 1.0 / (t * t)
        s11 += w * n * n
        s12 += w * n ** 3
        s22 += w * n ** 4
        r1 += w * n * t
        r2 += w * n * n * t
    det = s11 * s22 - s12 * s12
    return (r1 * s22 - r2 * s12) / det, (s11 * r2 - s12 * r1) / det


def main(csv_path, png_path):
    series, threads = load(csv_path)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    colors = {"uwaga": "tab:blue", "torch": "tab:orange"}
    labels = {"uwaga": "uwaga", "torch": "PyTorch (explicit attention)"}
    for impl, pts in series.items():
        ns = [p[0] for p in pts]
        ax.plot(ns, [p[1] for p in pts], "o-", color=colors.get(impl), label=labels.get(impl, impl))
        ax2.plot(ns, [p[2] for p in pts], "o-", color=colors.get(impl), label=labels.get(impl, impl))
    if "uwaga" in series:
        pts = series["uwaga"]
        a, b = fit_linear_plus_quadratic(pts)
        ns = [p[0] for p in pts]
        grid = [ns[0] * (ns[-1] / ns[0]) ** (i / 50) for i in range(51)]
        ax.plot(grid, [a * n for n in grid], ":", color="gray", label=f"uwaga's O(n·d²) part: {a:.3g}·n µs")
        ax.plot(grid, [b * n * n for n in grid], "--", color="gray",
                label=f"uwaga's O(n²·d) part: {b:.3g}·n² µs")
        if b > 0 and a > 0:  # where uwaga's two parts cost the same
            ax.axvline(a / b, color="gray", lw=0.5)
            ax.text(a / b, 0.02, f" n = {a / b:.0f}: equal time", color="gray", fontsize=8,
                    transform=ax.get_xaxis_transform())
    ax.axvline(2 * D, color="tab:red", lw=0.5)
    ax.text(2 * D, 0.08, " n = 2d: equal FLOPs", color="tab:red", fontsize=8, transform=ax.get_xaxis_transform())
    ax.set(xscale="log", yscale="log", xlabel="sequence length n", ylabel="µs per sequence (forward + backward)",
           title=f"One attention layer, d = {D}, 4 heads, {threads} thread(s)")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, which="both", alpha=0.3)
    ax2.set(xscale="log", xlabel="sequence length n", ylabel="GFLOP/s (matrix products)",
            title="Achieved rate (batch = 4096 / n)")
    ax2.legend(fontsize=8)
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_scaling.py mha_scaling.csv mha_scaling.png")
    main(sys.argv[1], sys.argv[2])
