"""The ablation figures (``ablation_<axis>.png/.pdf``): one per axis of ablations.csv, each variant
beside its base (report.figures writes them after the fixed figures)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from autonorm.analysis import stats  # noqa: E402
from autonorm.output_names import ablation_figure_stem  # noqa: E402
from autonorm.report.plotting import direction, grid, legend_below, limits, plain_ticks, save  # noqa: E402


def fig_ablation(ab: pd.DataFrame, axis: str) -> plt.Figure:
    """Metric (mean, 95% CI) against the swept value of one axis, one panel per dataset x metric."""
    a = ab[ab.axis == axis]
    panels = list(a.groupby(["dataset", "metric"], sort=False))
    fig, axes = grid(len(panels), ncols_max=3, w=4.0, h=3.2)
    for ax, ((d, metric), g) in zip(axes, panels):
        vals = pd.to_numeric(g["value"], errors="coerce")
        numeric = bool(vals.notna().all()) and len(vals) > 1
        xs = vals.to_numpy(float) if numeric else np.arange(len(g))
        vmin, vmax = stats.metric_range(metric)
        shown = []
        for xi, r in zip(xs, g.to_dict("records")):
            m = float(r["mean"])
            if not np.isfinite(m) or str(r.get("note", "")).startswith("same training runs"):
                continue  # a variant that is its base's own runs would only hide the base point
            lo = max(float(r["ci_low"]), vmin) if np.isfinite(r["ci_low"]) else m
            hi = min(float(r["ci_high"]), vmax) if np.isfinite(r["ci_high"]) else m
            base = str(r["is_base"]).lower() == "true"
            ax.errorbar(xi, m, yerr=[[m - lo], [hi - m]], fmt="s" if base else "o", capsize=3,
                        color="black" if base else "C0", ms=6)
            shown += [m, lo, hi]
        if numeric:
            order = np.argsort(xs)
            ax.plot(xs[order], g["mean"].to_numpy(float)[order], "-", color="C0", alpha=0.4)
            if (xs > 0).all() and xs.max() / max(xs.min(), 1e-12) >= 8:
                ax.set_xscale("log")
                ax.xaxis.set_minor_formatter(NullFormatter())
            ticks = sorted(set(xs))
            ax.set_xticks(ticks)
            ax.set_xticklabels([f"{v:g}" for v in ticks], fontsize=7)
        else:
            ax.set_xticks(xs)
            ax.set_xticklabels([str(v) if str(v) not in ("", "nan") else "base"
                                for v in g["value"]], rotation=30, ha="right", fontsize=7)
            ax.set_xlim(-0.6, len(g) - 0.4)
        ax.set_ylim(*limits(shown, metric))
        plain_ticks(ax)
        ax.margins(x=0.08)
        ax.set_xlabel(axis)
        ax.set_ylabel(f"{metric}  {direction(metric)}", fontsize=8)
        ax.set_title(d, fontsize=10)
    handles = [Line2D([], [], marker="s", ls="", color="black", label="base method"),
               Line2D([], [], marker="o", ls="", color="C0", label="variant")]
    fig.suptitle(f"Ablation: {axis} (mean over seeds, 95% CI clipped to the valid range)",
                 fontsize=11)
    fig.tight_layout()
    legend_below(fig, handles, [h.get_label() for h in handles])
    return fig



def make_ablation_figures(ab: pd.DataFrame, out_dir: Path, strict: bool = False) -> list[Path]:
    """One figure per ablation axis (only when ablations exist, so not in FIGURE_NAMES)."""
    written: list[Path] = []
    if ab.empty or "axis" not in ab:
        return written
    for axis in dict.fromkeys(ab["axis"]):
        try:
            fig = fig_ablation(ab, axis)
        except Exception as exc:  # noqa: BLE001
            if strict:
                raise
            print(f"autonorm-figures: ablation {axis} failed ({type(exc).__name__}: {exc})")
            plt.close("all")
            continue
        written.extend(save(fig, out_dir, ablation_figure_stem(axis)))
    return written
