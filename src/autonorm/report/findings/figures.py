"""The findings page's evidence figures (docs/findings/*.png), one function per figure, each
returning its caption (or None when its data are absent). They are drawn under matplotlib's own
defaults, whatever style the process set before: a PNG is a function of the records alone."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from autonorm.analysis import trainings
from autonorm.report.findings import rules
from autonorm.report.findings.gate_rows import gates_of, gate_regime
from autonorm.report.findings.routing_rows import unfrozen_twins
from autonorm.report.findings.main_table import STATED
from autonorm.report.findings.rows import placement_words
from autonorm.report.findings.rules import Paired
from autonorm.report.findings.studies import Study
from autonorm.report.fmt import fmt, fnum, pretty, truthy
from autonorm.report.paper import DOUBTFUL, H_ZERO, LN_BY_EPOCH, LN_THRESHOLD

#: no software version in the PNGs: a figure is a function of its data (byte-identical regeneration)
PNG_METADATA = {"Software": None}
#: the smallest font on a figure
SMALL = 8
SIDE_STYLE = {"attn": ("o", -0.15, "tab:blue", "attention-side selector"),
              "mlp": ("s", 0.15, "tab:orange", "MLP-side selector"),
              "block": ("D", 0.0, "tab:green", "the block's one selector")}


def _save(fig, out_dir: Path, name: str) -> None:
    import matplotlib.pyplot as plt

    fig.savefig(out_dir / name, dpi=90, metadata=PNG_METADATA)
    plt.close(fig)


def _panels(plt, n: int, ncols_max: int, w: float, h: float, extra: float = 0.0):
    """A grid of ``n`` panels, at most ``ncols_max`` wide, each w x h inches (plus ``extra`` below
    for the legend); the grid's unused panels hidden."""
    ncols = min(ncols_max, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows + extra), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes, nrows


def _legend_below(fig, axes, bottom: float) -> None:
    """One legend for all panels, below them (inside one it can hide a point); ``bottom``: the
    share of the figure's height it takes."""
    handles = {}
    for ax in axes.flat:
        for hd, lb in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lb, hd)
    fig.legend(list(handles.values()), list(handles), fontsize=SMALL, loc="lower center", ncol=len(handles),
               frameon=False)
    fig.tight_layout(rect=(0, bottom, 1, 1))


def gate_studies(studies: list[Study], reference: pd.DataFrame, d: str = "mnist") -> list[tuple]:
    """(study, gates, history, method, in regime, why, placement) of every study with learned gates on ``d``."""
    out = []
    for st in studies:
        g, h, m = gates_of(st, d)
        if len(g):
            ok, why = gate_regime(st, d, m, reference)
            out.append((st, g, h, m, ok, why, st.placement(d, m)))
    return out


def gates_per_selector(studies, reference, out_dir: Path, plt) -> str | None:
    """w_LN of every selector at epoch 5 and at the last epoch, in-regime MNIST studies first."""
    panels = []
    for st, g, h, m, ok, why, placement in gate_studies(studies, reference, "mnist") + \
            gate_studies(studies, reference, "ptb_pos"):
        d = str(g.dataset.iloc[0])
        if not rules.depth_ok((st.run_config(d, m).get("model") or {}).get("depth"), st.ctx.ds_family.get(d)):
            continue  # a smaller model: its layers are not the paper's
        for ep in dict.fromkeys([LN_BY_EPOCH if d == "mnist" else None, int(g.epoch.max())]):
            if ep is not None and (g.epoch == ep).any():
                panels.append((st, g, m, ok, placement, d, ep))
    panels = [p for p in panels if p[3] is True] + [p for p in panels if p[3] is not True]
    if not panels:
        return None
    fig, axes, nrows = _panels(plt, len(panels), 4, 4.2, 3.6, 0.6)
    for ax, (st, g, m, ok, placement, d, ep) in zip(axes.flat, panels):
        at = g[g.epoch == ep].assign(w_ln=lambda x: x.w_ln if "w_ln" in x else 1 - x.w_dyt)
        n_l = int(g.layer.max()) + 1
        for side, (mk, dx, color, label) in SIDE_STYLE.items():
            x = at[at.sublayer.astype(str) == side].groupby("layer").w_ln
            if not len(x.mean()):
                continue
            mean = x.mean()
            ax.errorbar(mean.index + 1 + dx, mean.values, yerr=[mean - x.min(), x.max() - mean], marker=mk, ls="none",
                        capsize=2, color=color, label=f"{label} (seed mean, min-max)")
        if d == "mnist":
            ax.axhline(LN_THRESHOLD, color="tab:red", ls="--", lw=1, label=f"the paper: w_LN > {LN_THRESHOLD}")
        ax.set_xlim(0.5, n_l + 0.5)
        ax.set_xticks(range(1, n_l + 1))
        ax.set_ylim(-0.03, 1.03)
        ax.tick_params(labelsize=SMALL)
        ax.set_xlabel("block (1 = first)", fontsize=SMALL + 1)
        ax.set_ylabel("w_LN (1 = LayerNorm only)", fontsize=SMALL + 1)
        # three lines: the alternative placement's words and the regime do not fit one panel's width
        ax.set_title(f"{pretty(d)}, {st.name} ({m}, n={g.seed.nunique()}), epoch {ep}\none selector "
                     f"{placement_words(placement)}\n{regime_words(ok)}",
                     fontsize=SMALL + 1)
    _legend_below(fig, axes, 0.6 / (3.6 * nrows + 0.6))
    _save(fig, out_dir, "gates_per_selector.png")
    return ("The weight of LayerNorm in every selector (1 = LayerNorm only, 0 = DyT only), at epoch 5 on MNIST (where "
            "the paper's claim reads it) and at the last epoch (the only one drawn for PTB, whose claims read it): "
            "seed mean with the seed range; red dashed: the paper's w_LN > 0.85. Each panel names its study, method, "
            "number of seeds, epoch, the selectors' placement, and whether the study is in the paper's regime.")


def regime_words(ok: bool | None) -> str:
    return {True: "in the paper's regime", False: "OUT of the paper's regime"}.get(ok, "regime not judged")


def entropy_over_epochs(studies, reference, out_dir: Path, plt) -> str | None:
    """Mean gate entropy per epoch with eps_H, T_freeze and the paper's epoch 5; one panel per study
    and dataset, in-regime ones first; AutoNorm-S and unfrozen AutoNorm as one line where they are
    one training."""
    panels = []
    for st in studies:
        hist = st.ctx.history
        if hist.empty:
            continue
        for d in dict.fromkeys(hist.dataset):
            g, h, m = gates_of(st, d)
            if len(h):
                ok, _ = gate_regime(st, d, m, reference)
                panels.append((ok, st, d, m))
    panels.sort(key=lambda p: p[0] is not True)
    if not panels:
        return None
    fig, axes, nrows = _panels(plt, len(panels), 3, 4.6, 3.3, 0.5)
    for ax, (ok, st, d, m) in zip(axes.flat, panels):
        hist = st.ctx.history
        curves = {}
        for meth in ("autonorm_s", "autonorm"):
            h = hist[(hist.dataset == d) & (hist.method == meth) & np.isfinite(hist.mean_entropy)]
            if len(h):
                curves[meth] = h.groupby("epoch").mean_entropy
        # one line where the two are one training (analysis.trainings: AutoNorm-S's run read as AutoNorm's, or
        # AutoNorm-S with freezing disabled); two, even if equal, where they were trained apart
        same, apart = trainings.seeds(st.ctx.runs, d, "autonorm_s", "autonorm")
        one = len(curves) == 2 and bool(same) and not apart
        disabled = not (st.run_config(d, "autonorm_s").get("autonorm") or {}).get("freeze_enabled", True)
        for meth, by in curves.items():
            if one and meth == "autonorm":
                continue
            label = (f"autonorm_s = autonorm ({'freezing disabled' if disabled else 'no seed froze'}: one training)"
                     if one else meth)
            style = {"autonorm_s": ("tab:blue", "-"), "autonorm": ("tab:purple", "--")}[meth]
            ax.plot(by.mean().index, by.mean().values, marker=".", color=style[0], ls=style[1], label=label)
            ax.fill_between(by.mean().index, by.min().values, by.max().values, alpha=0.15, color=style[0])
        ax.axhline(H_ZERO, color="tab:red", lw=0.9, ls="--", label=f"eps_H = {H_ZERO}")
        last = max(int(by.mean().index.max()) for by in curves.values())
        auto = st.run_config(d, m).get("autonorm") or {}
        if auto.get("freeze_enabled") and math.isfinite(fnum(auto.get("t_freeze"))):
            ax.axvline(fnum(auto["t_freeze"]), color="black", lw=0.8, ls=":", label="T_freeze of the study")
        if d in ("mnist", "fashion_mnist") and last >= LN_BY_EPOCH:
            ax.axvline(LN_BY_EPOCH, color="tab:green", lw=0.9, ls="-.", label="the paper's epoch 5")
        ax.set_ylim(0, 0.75)
        ax.tick_params(labelsize=SMALL)
        ax.set_xlabel(f"epoch ({int(fnum(st.ctx.dataset_meta(d).get('n_train')) or 0):,} training examples each)",
                      fontsize=SMALL + 1)
        ax.set_ylabel("mean gate entropy H", fontsize=SMALL + 1)
        n = hist[(hist.dataset == d) & (hist.method == m)].seed.nunique()
        ax.set_title(f"{pretty(d)}, {st.name} (n={n})\n{regime_words(ok)}", fontsize=SMALL + 1)
    _legend_below(fig, axes, 0.5 / (3.3 * nrows + 0.5))
    _save(fig, out_dir, "entropy_over_epochs.png")
    return ("The gates' mean entropy on the validation split per epoch (seed mean, band: seed range): AutoNorm-S "
            "(solid) and unfrozen AutoNorm (dashed), one line where the two are one training (AutoNorm-S's run read "
            "as AutoNorm's: no seed froze, or freezing is disabled on the family, as the legend says); two lines "
            "where unfrozen AutoNorm was trained as runs of its own, even where their curves are equal; red dashed: "
            "eps_H = 0.1 (the paper's freeze threshold); black dotted: the study's T_freeze, after which a frozen "
            "AutoNorm-S stays flat; green dash-dot: the paper's epoch 5 (MNIST, Fashion-MNIST, where a run reaches it). "
            "Panels in the paper's regime come first; each says whether its study is in it.")


def forest_rows(studies, reference) -> list[tuple]:
    """(label, Δ, lo90, hi90, lo95, hi95, margin, paper Δ, metric) of every in-regime comparison the ledger judges
    with a margin."""
    out = []
    for st in studies:
        comp = st.ctx.comparisons
        if comp.empty:
            continue
        for d in dict.fromkeys(comp.dataset):
            ok, _ = rules.study_regime(st, reference, d)
            if ok is not True:
                continue
            for metric in ("accuracy", "rmse"):
                m = rules.margin(metric, rules.paper_value(reference, d, "frozen_ln", metric))
                c = comp[(comp.dataset == d) & (comp.metric == metric)]
                pa = rules.paper_value(reference, d, "autonorm_s", metric)
                paper_methods = set(reference[(reference.dataset == d) & (reference.metric == metric)].method)
                for r in c.itertuples(index=False):
                    p = Paired.of(r._asdict())
                    if not p.testable or truthy(getattr(r, "same_runs", False)) or r.method_b not in paper_methods:
                        continue  # the main tables' comparisons (random: the learned-vs-random rows below)
                    pd_ = pa - rules.paper_value(reference, d, r.method_b, metric)
                    # the paper states a lead (the red x) and, for these, an equivalence beside it (the band)
                    stated = " (stated lead and equivalence)" if STATED.get((d, r.method_b), ((), False))[1] else ""
                    outside = [a for a in (r.method_a, r.method_b) if a != "frozen_ln"
                               and rules.arm_band(st.ctx.summary, reference, d, metric, a)[0]]
                    if outside:
                        stated += f" ({', '.join(outside)} outside its band)"
                    out.append((f"{st.name}, {pretty(d)}: {r.method_a} − {r.method_b}{stated}, {n_label(st, p.n)}", p.diff,
                                *p.bounds(), *p.ci(), m, pd_, metric))
        lr = st.ctx.learned_vs_random
        for r in (lr.itertuples(index=False) if not lr.empty else []):
            ok, _ = rules.study_regime(st, reference, r.dataset)
            p = Paired.of(r._asdict())
            if ok is True and r.metric in ("accuracy", "rmse") and p.testable:
                m = rules.margin(r.metric, rules.paper_value(reference, r.dataset, "frozen_ln", r.metric))
                out.append((f"{st.name}, {pretty(r.dataset)}: {r.method_a} − random, {n_label(st, p.n)}", p.diff, *p.bounds(),
                            *p.ci(), m, math.nan, r.metric))
    return out


def n_label(st, n: int) -> str:
    """'n=5'; 'n=3 of 5 planned: interim' where the study's plan (study.json) has more seeds to come, so that
    an interval drawn beside decided ones is not read as one (rules.decided_from_seeds)."""
    planned = getattr(st, "planned_seeds", 0)
    return f"n={n}" + (f" of {planned} planned: interim" if n < planned else "")


def forest(studies, reference, out_dir: Path, plt) -> str | None:
    rows = forest_rows(studies, reference)
    if not rows:
        return None
    # one axis a comparison, each on its own scale: a 0.2-RMSE gap to the Teacher and a 0.002 margin cannot
    # share an axis and both be read
    metric_order = list(dict.fromkeys(r[-1] for r in rows))   # rows of one metric together, first seen first
    rows = sorted(rows, key=lambda r: metric_order.index(r[-1]))
    fig, axes = plt.subplots(len(rows), 1, figsize=(9.5, 0.62 * len(rows) + 1.3), squeeze=False)
    for i, (ax, (label, diff, lo, hi, lo95, hi95, m, pdiff, mt)) in enumerate(zip(axes[:, 0], rows)):
        if math.isfinite(m):
            ax.axvspan(-m, m, color="tab:green", alpha=0.15, lw=0)
        ax.errorbar(diff, 0, xerr=[[diff - lo95], [hi95 - diff]], fmt="none", ecolor="tab:blue", elinewidth=0.8,
                    capsize=2, alpha=0.6)
        ax.errorbar(diff, 0, xerr=[[diff - lo], [hi - diff]], fmt="o", color="tab:blue", elinewidth=2.6,
                    capsize=0, ms=4)
        if math.isfinite(pdiff):
            ax.plot(pdiff, 0, "x", color="tab:red", ms=7, mew=2)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_ylim(-0.6, 0.6)
        ax.set_yticks([0], [label], fontsize=SMALL)
        ax.tick_params(axis="x", labelsize=SMALL - 1)
        if i == len(rows) - 1 or rows[i + 1][-1] != mt:   # the last of its metric: name the unit
            ax.set_xlabel(f"{mt}: first minus second ({'points' if mt == 'accuracy' else 'RMSE'})", fontsize=SMALL)
    axes[0, 0].set_title("Every comparison of the primary metric in the paper's regime, each on its own scale:\n"
                         "ours (dot; thick: the CI its verdict reads, "
                         "thin: 95% CI), the paper's (red x), the margin (green band)", fontsize=SMALL + 1, loc="right")
    fig.tight_layout()
    _save(fig, out_dir, "forest_in_regime.png")
    return ("Every paired comparison of the primary metric (accuracy; RMSE) the ledger judges in the paper's regime "
            "(its precision, recall, F1 and rotated-accuracy rows are in the ledger only): our difference (blue dot) "
            "with the interval its verdict reads (thick: 90% for a comparison alone, wider, at Bonferroni's level, where "
            "the claim's family has several tests; its ends are the one-sided bounds) and its 95% CI (thin), "
            "the paper's difference where its tables give one (red x), and the margin (green band: 0.4% of "
            "the paper's FrozenLN value; docs/method.md section 11); each row has its own scale. A thick bar inside "
            "the band is an equivalence, "
            "one wholly outside it a difference beyond the margin; a red x outside the thick bar, on either side, is "
            "a stated difference the data exclude (a larger difference than stated excludes it as a smaller one "
            "does). An arm outside its band (ours more than 2 points, or 10% of an RMSE, from the paper's number for "
            "it, either way) decides nothing where its deviation points the way the result went.")


def method_comparison(studies, reference, out_dir: Path, plt) -> str | None:
    """Each method's primary test metric per study and dataset, beside the paper's."""
    rows = []
    for st in studies:
        s = st.ctx.summary
        if s.empty:
            continue
        prim = s[(s.metric_family == "primary") & (s["n"].fillna(0) > 0) & s.metric.isin(("accuracy", "rmse"))]
        # AutoNorm-S whose freeze never fired and whose paired numbers equal unfrozen AutoNorm's: one training
        twins = unfrozen_twins(st, st.ctx.learned_vs_random) if not st.ctx.learned_vs_random.empty else set()
        for (d, metric), g in prim.groupby(["dataset", "metric"], sort=False):
            one, apart = trainings.seeds(st.ctx.runs, d, "autonorm_s", "autonorm")
            g = g[~g.method.isin([m for m in g.method if m == "autonorm" and "autonorm_s" in set(g.method) and (
                (one and not apart) or d in twins)])]
            if g.method.nunique() > 1:  # a comparison needs two methods (a pilot runs one)
                rows.append((st, d, metric, g.reset_index(drop=True), d in twins))
    if not rows:
        return None
    rows.sort(key=lambda r: rules.study_regime(r[0], reference, r[1])[0] is not True)  # in the regime first
    fig, axes, nrows = _panels(plt, len(rows), 4, 3.4, 3.9)
    for ax, (st, d, metric, g, twin) in zip(axes.flat, rows):
        ax.errorbar(range(len(g)), g["mean"], yerr=[g["mean"] - g["ci95_low"], g["ci95_high"] - g["mean"]],
                    fmt="o", capsize=2, ms=4, label="ours (mean, 95% CI)")
        paper = pd.to_numeric(g.get("paper_mean"), errors="coerce") if "paper_mean" in g else None
        if paper is not None and paper.notna().any() and (d, metric) not in DOUBTFUL:
            ax.plot(range(len(g)), paper, "x", color="tab:red", ms=6, mew=2, label="the paper")
        base = g["baseline_value"].dropna()
        # in the title, not inside the axes, where a method's point may sit under it
        trivial = f"; trivial baseline {fmt(fnum(base.iloc[0]))}" if len(base) else ""
        one, apart = trainings.seeds(st.ctx.runs, d, "autonorm_s", "autonorm")
        names = [m + (" = autonorm" if m == "autonorm_s" and ((one and not apart) or twin) else "") for m in g.method]
        ax.set_xticks(range(len(g)), names, rotation=60, ha="right", fontsize=SMALL)
        ax.tick_params(axis="y", labelsize=SMALL)
        ok, _ = rules.study_regime(st, reference, d)
        lo, hi = int(g["n"].min()), int(g["n"].max())
        n = f"{lo}" if lo == hi else f"{lo}-{hi}"  # seeds per method differ while a study grows
        # three lines: a long study name on one would run into the next panel's title
        ax.set_title(f"{pretty(d)}, {st.name}\n(n={n}), {metric} {'↑' if metric == 'accuracy' else '↓'}\n"
                     f"{regime_words(ok)}{trivial}", fontsize=SMALL + 1)
    _legend_below(fig, axes, 0.5 / (3.9 * nrows))
    _save(fig, out_dir, "method_comparison.png")
    return ("Each method's primary test metric per study and dataset: ours, mean with its 95% CI over seeds (dots); "
            "the paper's number (red x, where it gives one that means what it says). Each panel names its study, "
            "its number of seeds (a range where the methods have different numbers) and whether the study is in "
            "the paper's regime; unfrozen AutoNorm is drawn under AutoNorm-S's name (autonorm_s = autonorm) where the two "
            "are one training read under two names, or two trainings of one config with the same numbers.")


#: figures earlier pages drew and this one does not
RETIRED = ("w_dyt_per_layer.png",)
FIGURES = (("gates_per_selector.png", gates_per_selector), ("entropy_over_epochs.png", entropy_over_epochs),
           ("forest_in_regime.png", forest), ("method_comparison.png", method_comparison))


def draw_figures(studies: list[Study], reference: pd.DataFrame, out_dir: Path) -> list[tuple[str, str]]:
    """Every figure of :data:`FIGURES` whose data exist; returns (file name, caption) of each drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = []
    with plt.style.context("default"):
        for name, draw in FIGURES:
            caption = draw(studies, reference, out_dir, plt)
            if caption:
                drawn.append((name, caption))
    for name in [n for n, _ in FIGURES if n not in dict(drawn)] + list(RETIRED):
        (out_dir / name).unlink(missing_ok=True)  # a figure of an earlier page that this one does not draw
    return drawn
