"""The findings page's evidence figures (docs/findings/*.png): the per-layer gates, the gate
entropy over training, the method comparison."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from autonorm.report.fmt import fmt, fnum, pretty, truthy

from autonorm.report.ledger import _gated, _gates_of
from autonorm.report.paper import DOUBTFUL, H_ZERO, LN_BY_EPOCH
from autonorm.report.sections import mechanism
from autonorm.report.study import Study

#: no software version in the PNGs: a figure is a function of its data (byte-identical regeneration)
PNG_METADATA = {"Software": None}


#: the paper's training images per epoch (its full training split less its validation holdout)
PAPER_TRAIN_IMAGES = {"mnist": 54_000, "fashion_mnist": 54_000, "ptb_pos": None}


def _paper_depth(st: Study, d: str) -> bool:
    """The study's gated runs on ``d`` have the paper's backbone depth (layer-wise claims need it)."""
    from autonorm.report import verdicts

    for m in ("autonorm_s", "autonorm"):
        model = st.run_config(d, m).get("model") or {}
        if model:
            return verdicts.depth_ok(model.get("depth"), st.ctx.ds_family.get(d))
    return False


# --------------------------------------------------------------------------- figures
def draw_figures(studies: list[Study], out_dir: Path) -> list[tuple[str, str]]:
    """The evidence figures; returns (file name, caption) of each drawn.

    Drawn under matplotlib's own defaults, whatever style the process set before (the report's
    figures set seaborn's theme): the PNGs are a function of the records alone, byte for byte."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.style.context("default"):
        return _draw_figures(studies, out_dir, plt)


def _draw_figures(studies: list[Study], out_dir: Path, plt) -> list[tuple[str, str]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = []
    # the gate figures read the first study whose gated runs have the paper's depth
    deep = next((st for st in studies if not st.ctx.gates.empty
                 and any(_gated(st, d) and _paper_depth(st, d) for d in ("mnist", "ptb_pos"))), None)
    if deep is not None:
        ds = [d for d in ("mnist", "ptb_pos") if _gated(deep, d) and _paper_depth(deep, d)]
        if ds:
            fig, axes = plt.subplots(1, len(ds), figsize=(5.4 * len(ds), 3.6), squeeze=False)
            epochs_read = {}
            for ax, d in zip(axes[0], ds):
                g, _ = _gates_of(deep, d)
                # the epoch the verdict reads: MNIST's claim is "within 5 epochs", PTB's the end
                ep = LN_BY_EPOCH if d == "mnist" and (g.epoch == LN_BY_EPOCH).any() else None
                at = g[g.epoch == ep] if ep else g[g.epoch == g.groupby("seed")["epoch"].transform("max")]
                epochs_read[d] = ep or int(g.epoch.max())
                for sub, mk, dx, color in (("attn", "o", -0.12, "tab:blue"), ("mlp", "s", 0.12, "tab:orange")):
                    x = at[at.sublayer == sub].groupby("layer").w_dyt
                    mean, lo, hi = x.mean(), x.min(), x.max()
                    ax.errorbar(mean.index + 1 + dx, mean.values, yerr=[mean - lo, hi - mean], marker=mk,
                                capsize=2, ls="none", color=color,
                                label=f"{'attention' if sub == 'attn' else 'MLP'}-side selector (seed mean, min-max)")
                n_l = int(g.layer.max()) + 1
                if d == "ptb_pos":
                    early, deep_ix = mechanism.ptb_layer_groups(n_l)
                    ax.fill_between([deep_ix[0] + 0.5, n_l + 0.5], 0.72, 1.02, color="tab:green", alpha=0.12,
                                    label="paper: layers 8-12 w_DyT > 0.72")
                    ax.fill_between([0.5, early[-1] + 1.5], 0.28, 0.72, color="tab:purple", alpha=0.10,
                                    label="paper: layers 1-4 mixed (ours: 0.28-0.72)")
                else:
                    ax.fill_between([0.5, n_l + 0.5], -0.02, 0.15, color="tab:green", alpha=0.12,
                                    label="paper: w_DyT < 0.15 (w_LN > 0.85) by epoch 5")
                ax.set_xlim(0.5, n_l + 0.5)
                ax.set_xticks(range(1, n_l + 1))
                ax.set_ylim(-0.02, 1.02)
                ax.set_xlabel("layer (1 = first block)")
                ax.set_ylabel(f"w_DyT at epoch {epochs_read[d]}")
                ax.set_title(f"{pretty(d)} ({g.method.iloc[0]}, {deep.name} study)", fontsize=10)
                ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.22), ncol=1, frameon=False)
            fig.tight_layout()
            fig.savefig(out_dir / "w_dyt_per_layer.png", dpi=90, metadata=PNG_METADATA)
            plt.close(fig)
            when = "; ".join(f"{pretty(d)} at epoch {e}" for d, e in epochs_read.items())
            drawn.append(("w_dyt_per_layer.png", f"Per-layer weight of DyT (0 = LayerNorm only, 1 = DyT only) "
                          f"at the epoch each verdict reads ({when}), {deep.name} study: the attention-side "
                          "(circles) and MLP-side (squares) selector of every block, seed mean with the "
                          "seed range; shaded: where the paper says the points lie."))
        hist = deep.ctx.history
        h = hist[hist.method.isin(("autonorm_s", "autonorm")) & np.isfinite(hist.mean_entropy)]
        if len(h):
            ds = list(dict.fromkeys(h.dataset))
            ncols = min(3, len(ds))
            fig, axes = plt.subplots(math.ceil(len(ds) / ncols), ncols, figsize=(4.6 * ncols, 3.4 * math.ceil(len(ds) / ncols)),
                                     squeeze=False)
            for ax in axes.flat[len(ds):]:
                ax.set_visible(False)
            same = []
            for ax, d in zip(axes.flat, ds):
                n_train = fnum(deep.ctx.dataset_meta(d).get("n_train"))
                per_epoch = n_train if math.isfinite(n_train) and n_train > 0 else None
                scale = (per_epoch / 1000.0) if per_epoch else 1.0
                curves = {}
                for m in ("autonorm", "autonorm_s"):
                    hm = h[(h.dataset == d) & (h.method == m)]
                    if hm.empty:
                        continue
                    by = hm.groupby("epoch").mean_entropy
                    curves[m] = by.mean()
                    ls = "--" if m == "autonorm_s" else "-"
                    ax.plot(by.mean().index * scale, by.mean().values, marker=".", ls=ls, label=m)
                    ax.fill_between(by.mean().index * scale, by.min().values, by.max().values, alpha=0.15)
                if len(curves) == 2 and curves["autonorm"].equals(curves["autonorm_s"]):
                    same.append(pretty(d))
                ax.axhline(math.log(2), color="grey", lw=0.6, ls=":")
                ax.text(0.02, math.log(2) - 0.05, "ln 2", fontsize=7, color="grey",
                        transform=ax.get_yaxis_transform())
                ax.axhline(H_ZERO, color="tab:red", lw=0.8, ls="--")
                paper_epoch = PAPER_TRAIN_IMAGES.get(d)
                if per_epoch and paper_epoch:
                    # the paper's epochs in images seen: its epoch 5 (the MNIST claims) and T_freeze 10
                    for k, label in ((5, "paper epoch 5"), (10, "paper T_freeze (epoch 10)")):
                        ax.axvline(k * paper_epoch / 1000.0, color="tab:green", lw=0.7, ls="-.")
                        ax.text(k * paper_epoch / 1000.0, 0.72, label, fontsize=6, rotation=90, va="top",
                                ha="right", color="tab:green")
                fz = deep.ctx.freeze
                fd = fz[(fz.dataset == d) & (fz.method == "autonorm_s") & fz.enabled.map(truthy)] \
                    if not fz.empty else fz
                if len(fd):
                    ax.axvline(fnum(fd.t_freeze.iloc[0]) * scale, color="black", lw=0.6, ls="--")
                ax.set_ylim(0, 0.75)
                ax.set_xlabel("thousand training images seen" if per_epoch else "epoch")
                ax.set_ylabel("mean gate entropy H (validation)")
                ax.set_title(pretty(d), fontsize=10)
                ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(out_dir / "entropy_over_epochs.png", dpi=90, metadata=PNG_METADATA)
            plt.close(fig)
            note = (f" On {', '.join(same)} the two curves are one: no seed froze, so AutoNorm-S trained "
                    "as AutoNorm." if same else "")
            drawn.append(("entropy_over_epochs.png", "Mean gate entropy on the validation split against "
                          "training images seen (seed mean, band: seed range); dashed red: eps_H = 0.1; "
                          "dashed black: our T_freeze; dash-dot green: the paper's epoch 5 and T_freeze "
                          "in images (its full training split)." + note))
    rows = []
    for st in studies:
        s = st.ctx.summary
        if s.empty:
            continue
        prim = s[(s.metric_family == "primary") & (s["n"].fillna(0) > 0)
                 & s.metric.isin(("accuracy", "rmse"))]
        for (d, metric), g in prim.groupby(["dataset", "metric"], sort=False):
            if g.method.nunique() > 1:  # a comparison needs two methods (a pilot runs one)
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
                        fmt="o", capsize=2, ms=3, label="ours (95% CI)")
            paper = pd.to_numeric(g.get("paper_mean"), errors="coerce") if "paper_mean" in g else None
            if paper is not None and (not paper.notna().any() or (d, metric) in DOUBTFUL):
                paper = None
            if paper is not None:
                ax.plot(range(len(g)), paper, "x", color="tab:red", ms=5, label="paper")
            base = g["baseline_value"].dropna()
            vals = pd.concat([g["ci95_low"], g["ci95_high"]] + ([paper] if paper is not None else []))
            vals = pd.to_numeric(vals, errors="coerce").dropna()
            lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (math.nan, math.nan)
            span = max(hi - lo, 1e-9) if math.isfinite(hi - lo) else 0.0
            if len(base) and lo - span <= fnum(base.iloc[0]) <= hi + span:  # drawn where it keeps the gaps visible
                ax.axhline(fnum(base.iloc[0]), color="grey", ls="--", lw=0.8)
                ax.text(0.5, fnum(base.iloc[0]), "trivial baseline", transform=ax.get_yaxis_transform(),
                        fontsize=6, color="grey", va="top", ha="center")  # between markers
            elif len(base):  # far off the axis: named, so that a reader knows where it is
                ax.text(0.5, 0.02, f"trivial baseline {fmt(fnum(base.iloc[0]))} (off the axis)",
                        transform=ax.transAxes, fontsize=6, color="grey", ha="center")
            ax.set_xticks(range(len(g)), g["method"], rotation=75, fontsize=7)
            ax.set_title(f"{pretty(d)}\n{name}, {metric} {'↑' if metric == 'accuracy' else '↓'}",
                         fontsize=8)
            ax.tick_params(axis="y", labelsize=7)
        # the legend below the panels: inside one it can hide a method's point
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, fontsize=6, loc="lower center", ncol=len(labels), frameon=False)
        fig.tight_layout(rect=(0, 0.05 / nrows, 1, 1))
        fig.savefig(out_dir / "method_comparison.png", dpi=90, metadata=PNG_METADATA)
        plt.close(fig)
        drawn.append(("method_comparison.png", "Each method's primary test metric per study and "
                      "dataset: ours, mean with its 95% CI over seeds (dots); the paper's number (red x, "
                      "where it gives one that means what it says); dashed: the dataset's trivial "
                      "baseline (majority class, most frequent tag, training mean)."))
    return drawn


# --------------------------------------------------------------------------- the page
