"""The findings page's evidence figures (docs/findings/*.png): the per-layer gates, the gate
entropy over training, the method comparison."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from autonorm.report.fmt import fnum, pretty, truthy

from autonorm.report.ledger import _gated, _gates_of
from autonorm.report.paper import H_ZERO
from autonorm.report.sections import mechanism
from autonorm.report.study import Study

#: no software version in the PNGs: a figure is a function of its data (byte-identical regeneration)
PNG_METADATA = {"Software": None}


# --------------------------------------------------------------------------- figures
def draw_figures(studies: list[Study], out_dir: Path) -> list[tuple[str, str]]:
    """The evidence figures; returns (file name, caption) of each drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = []
    deep = next((s for s in studies if s.name in ("paper", "depth") and not s.ctx.gates.empty), None)
    if deep is not None:
        ds = [d for d in ("mnist", "ptb_pos") if _gated(deep, d)]
        if ds:
            fig, axes = plt.subplots(1, len(ds), figsize=(5.2 * len(ds), 3.4), squeeze=False)
            for ax, d in zip(axes[0], ds):
                g, _ = _gates_of(deep, d)
                last = g.groupby("seed")["epoch"].transform("max")
                fin = g[g.epoch == last]
                for sub, mk in (("attn", "o"), ("mlp", "s")):
                    x = fin[fin.sublayer == sub].groupby("layer").w_dyt
                    mean, lo, hi = x.mean(), x.min(), x.max()
                    ax.errorbar(mean.index + 1, mean.values, yerr=[mean - lo, hi - mean], marker=mk,
                                capsize=2, label=f"before {sub} (seed mean, min-max)")
                ax.axhline(0.5, color="grey", lw=0.6, ls=":")
                n_l = int(g.layer.max()) + 1
                # where the paper says the points should be (shaded)
                if d == "ptb_pos":
                    early, deep_ix = mechanism.ptb_layer_groups(n_l)
                    ax.fill_between([deep_ix[0] + 0.5, n_l + 0.5], 0.72, 1.02, color="tab:green", alpha=0.12,
                                    label="paper: layers 8-12 w_DyT > 0.72")
                    ax.fill_between([0.5, early[-1] + 1.5], 0.28, 0.72, color="tab:blue", alpha=0.08,
                                    label="paper: layers 1-4 mixed (ours: 0.28-0.72)")
                else:
                    ax.fill_between([0.5, n_l + 0.5], -0.02, 0.15, color="tab:green", alpha=0.12,
                                    label="paper: w_LN > 0.85 (w_DyT < 0.15) in every layer by epoch 5")
                ax.set_ylim(-0.02, 1.02)
                ax.set_xlabel("layer (1 = first block)")
                ax.set_ylabel("w_DyT at the last epoch")
                ax.set_title(f"{pretty(d)} ({g.method.iloc[0]}, {deep.name} study)", fontsize=10)
                ax.legend(fontsize=7, loc="best")
            fig.tight_layout()
            fig.savefig(out_dir / "w_dyt_per_layer.png", dpi=90, metadata=PNG_METADATA)
            plt.close(fig)
            drawn.append(("w_dyt_per_layer.png", "Per-layer w_DyT at the last epoch, at the paper's "
                          "depth: each selector's seed mean with the seed range (0 = LN only, "
                          "1 = DyT only); dashed red: the paper's threshold."))
        hist = deep.ctx.history
        h = hist[hist.method.isin(("autonorm_s", "autonorm")) & np.isfinite(hist.mean_entropy)]
        if len(h):
            ds = list(dict.fromkeys(h.dataset))
            fig, axes = plt.subplots(1, len(ds), figsize=(4.2 * len(ds), 3.2), squeeze=False)
            for ax, d in zip(axes[0], ds):
                for m in ("autonorm", "autonorm_s"):
                    hm = h[(h.dataset == d) & (h.method == m)]
                    if hm.empty:
                        continue
                    by = hm.groupby("epoch").mean_entropy
                    ax.plot(by.mean().index, by.mean().values, marker=".", label=m)
                    ax.fill_between(by.mean().index, by.min().values, by.max().values, alpha=0.2)
                ax.axhline(math.log(2), color="grey", lw=0.6, ls=":")
                ax.text(0.02, math.log(2) - 0.05, "ln 2", fontsize=7, color="grey",
                        transform=ax.get_yaxis_transform())
                ax.axhline(H_ZERO, color="tab:red", lw=0.8, ls="--")
                fz = deep.ctx.freeze
                fd = fz[(fz.dataset == d) & (fz.method == "autonorm_s") & fz.enabled.map(truthy)] \
                    if not fz.empty else fz
                if len(fd):
                    ax.axvline(fnum(fd.t_freeze.iloc[0]), color="black", lw=0.6, ls="--")
                ax.set_ylim(0, 0.75)
                ax.set_xlabel("epoch")
                ax.set_ylabel("mean gate entropy H (validation)")
                ax.set_title(pretty(d), fontsize=10)
                ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(out_dir / "entropy_over_epochs.png", dpi=90, metadata=PNG_METADATA)
            plt.close(fig)
            drawn.append(("entropy_over_epochs.png", "Mean gate entropy on the validation split, "
                          "per epoch (seed mean, band: seed range); dashed red: eps_H = 0.1; "
                          "dashed black: T_freeze."))
    rows = []
    for st in studies:
        s = st.ctx.summary
        if s.empty:
            continue
        prim = s[(s.metric_family == "primary") & (s["n"].fillna(0) > 0)
                 & s.metric.isin(("accuracy", "rmse"))]
        for (d, metric), g in prim.groupby(["dataset", "metric"], sort=False):
            rows.append((st.name, d, metric, g))
    if rows:
        ncols = min(5, len(rows))  # a grid, not a strip: each panel stays readable
        nrows = math.ceil(len(rows) / ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 3.3 * nrows), squeeze=False)
        for ax in axes.flat[len(rows):]:
            ax.set_visible(False)
        for ax, (name, d, metric, g) in zip(axes.flat, rows):
            g = g.reset_index(drop=True)
            ax.errorbar(range(len(g)), g["mean"], yerr=[g["mean"] - g["ci95_low"],
                                                         g["ci95_high"] - g["mean"]],
                        fmt="o", capsize=2, ms=3)
            base = g["baseline_value"].dropna()
            lo, hi = fnum(g["ci95_low"].min()), fnum(g["ci95_high"].max())
            span = (hi - lo) if math.isfinite(hi - lo) else 0.0
            if len(base) and lo - span <= fnum(base.iloc[0]) <= hi + span:  # only where in range
                ax.axhline(fnum(base.iloc[0]), color="grey", ls="--", lw=0.8)
                ax.text(0.5, fnum(base.iloc[0]), "trivial baseline", transform=ax.get_yaxis_transform(),
                        fontsize=6, color="grey", va="top", ha="center")  # between markers
            ax.set_xticks(range(len(g)), g["method"], rotation=75, fontsize=7)
            ax.set_title(f"{pretty(d)}\n{name}, {metric} {'↑' if metric == 'accuracy' else '↓'}",
                         fontsize=8)
            ax.tick_params(axis="y", labelsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / "method_comparison.png", dpi=90, metadata=PNG_METADATA)
        plt.close(fig)
        drawn.append(("method_comparison.png", "Each method's primary test metric per study and "
                      "dataset: mean with its 95% CI over seeds; dashed: the dataset's trivial "
                      "baseline (majority class, most frequent tag, training mean) where it is in range."))
    return drawn


# --------------------------------------------------------------------------- the page
