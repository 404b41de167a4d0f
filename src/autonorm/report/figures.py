"""Figures drawn from the aggregate tables (PNG and PDF).

Why a fixed list: Snakemake must name every output of the figures rule in
advance, so ``autonorm.output_names.FIGURES`` registers every figure (its stem,
the function here that draws it, the tables it reads, its caption) and
``FIGURE_NAMES`` is the complete list of files this module writes, every one of
them on every call.  When a
figure's data is absent in a run (e.g. no gated method was trained, or no
corruption set was evaluated), the file still exists and shows a panel that
says "no data for this figure in this run" instead of failing the DAG.

Figures (all read only the CSVs from ``autonorm-aggregate``):

``method_comparison``  per dataset, the primary metric per method (mean, 95%
                       t-CI clipped to the metric's valid range), panels in one
                       row per family; the paper's value as a black cross where
                       it is comparable; the y label says which way is better.
``gate_entropy``       mean gate entropy over epochs for the gated methods
                       (line: seed mean, band: seed min..max), ln 2, eps_H and
                       freeze epochs in one legend below the panels; a method
                       whose curve is identical to another's (the same runs) is
                       drawn dashed on top and labelled so.
``wdyt_heatmap``       w_DyT per selector (rows) and dataset x gated method
                       (columns) at the last epoch, seed mean; sized from the
                       counts so every value stays readable.
``metric_vs_entropy``  validation metric against mean gate entropy, one point
                       per epoch (seed mean), per dataset.
``corruptions``        accuracy per corruption at severity 3, and mean accuracy
                       against (integer) severity, per method, for cifar10 when
                       present, otherwise the first corruption-evaluated dataset.

Ablation figures (``ablation_<axis>.png/.pdf``, one per axis) are written
only when ablations.csv has rows, so they are not in ``FIGURE_NAMES``;
the report links the ones it finds.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from autonorm.analysis import stats  # noqa: E402
from autonorm.io_utils import read_table, require_folder  # noqa: E402
from autonorm.methods import GATED_METHODS  # noqa: E402
from autonorm.output_names import FIGURES  # noqa: E402
# the shared helpers and the ablation figures live beside this module
from autonorm.report.plotting import (FAMILY_ORDER, LN2, NO_DATA, direction, family_panels, grid,  # noqa: E402
                                      identical, legend_below, limits, no_data_figure, order_methods, palette,
                                      plain_ticks, primary_metric, save, style)
from autonorm.report.ablation_figures import make_ablation_figures  # noqa: E402


# --------------------------------------------------------------------------- figures
def fig_method_comparison(summary: pd.DataFrame) -> plt.Figure:
    title = "Method comparison: primary test metric (mean over seeds, 95% CI)"
    if summary.empty or not (summary["n"] > 0).any():
        return no_data_figure(title, "summary.csv has no run with a result")
    panels = _comparison_panels(summary)
    if not panels:
        return no_data_figure(title, "no primary metric (accuracy / rmse / perplexity) found")
    all_methods = order_methods(summary["method"])
    pal = palette(all_methods)
    fig, placed = family_panels(panels)
    seen = {"paper": False, "clipped": False, "doubtful": False, "baseline": False}
    for ax, (fam, d, metric, sd) in placed:
        for key, drawn in _comparison_panel(ax, d, metric, sd, pal).items():
            seen[key] |= drawn
    handles = [Line2D([], [], marker="o", ls="-", color="#444444",
                      label="ours: mean, 95% t-CI" + (" (clipped to the valid range)"
                                                       if seen["clipped"] else ""))]
    if seen["paper"]:
        handles.append(Line2D([], [], marker="x", ls="", color="black", mew=1.6,
                              label="paper (reported mean)"))
    if seen["baseline"]:
        handles.append(Line2D([], [], ls="--", color="#b00000", lw=1,
                              label="trivial baseline (majority / most frequent / mean)"))
    legend_below(fig, handles, [h.get_label() for h in handles])
    note = "CIs clipped to the metric's valid range." if seen["clipped"] else ""
    if seen["doubtful"]:
        note += " † paper value not comparable with ours (see the report)."
    fig.suptitle(title + (f"\n{note.strip()}" if note else ""), fontsize=11)
    fig.tight_layout(rect=(0.03, 0, 1, 0.97))
    return fig


def _comparison_panels(summary: pd.DataFrame) -> list[tuple]:
    """(family, dataset, primary metric, its summary rows) of each dataset with a primary metric."""
    panels = []
    for d in dict.fromkeys(summary["dataset"]):
        sd = summary[summary.dataset == d]
        metric = primary_metric(sd.loc[sd.n > 0, "metric"])
        if metric is not None:
            fam = str(sd["family"].dropna().iloc[0]) if sd["family"].notna().any() else "other"
            panels.append((fam if fam in FAMILY_ORDER else "other", d, metric,
                           sd[sd.metric == metric]))
    return panels


def _comparison_panel(ax, d: str, metric: str, sd: pd.DataFrame, pal: dict) -> dict[str, bool]:
    """One dataset's panel: each method's mean and CI, the paper's value, the trivial baseline.
    Returns what it drew that the legend and the title must explain."""
    from autonorm.report.paper import DOUBTFUL

    methods = order_methods(sd["method"])
    sd = sd.set_index("method").loc[methods]
    x = np.arange(len(methods))
    means = sd["mean"].to_numpy(float)
    vmin, vmax = stats.metric_range(metric)
    lo_raw, hi_raw = sd["ci95_low"].to_numpy(float), sd["ci95_high"].to_numpy(float)
    lo, hi = np.clip(lo_raw, vmin, vmax), np.clip(hi_raw, vmin, vmax)
    drew = {"clipped": bool(np.any((lo != lo_raw) & np.isfinite(lo_raw))
                            | np.any((hi != hi_raw) & np.isfinite(hi_raw))),
            "paper": False, "doubtful": False, "baseline": False}
    doubtful = (d, metric) in DOUBTFUL
    shown = list(means) + list(lo) + list(hi)
    for i, m in enumerate(methods):
        if np.isfinite(means[i]):
            err = np.array([[means[i] - lo[i] if np.isfinite(lo[i]) else 0.0],
                            [hi[i] - means[i] if np.isfinite(hi[i]) else 0.0]])
            ax.errorbar(x[i], means[i], yerr=err, fmt="o", capsize=3, color=pal[m], ms=6)
        pm = sd["paper_mean"].iloc[i]
        if np.isfinite(pm) and not doubtful:
            ax.plot(x[i] + 0.25, pm, "x", color="black", ms=7, mew=1.6)
            shown.append(pm)
            drew["paper"] = True
    off_axis, drew["baseline"] = _comparison_baseline(ax, sd, shown)
    if doubtful and sd["paper_mean"].notna().any():
        drew["doubtful"] = True
        ax.text(0.02, 0.98, "paper value not comparable (†)", transform=ax.transAxes,
                ha="left", va="top", fontsize=7, color="#8a0000")
    standin = bool(sd["standin"].map(lambda v: str(v).lower() == "true").any())
    same = sd["same_run_as"] if "same_run_as" in sd else pd.Series("", index=sd.index)
    labels = []
    for m in methods:
        n = sd.loc[m, "n"]
        extra = f" = {same[m]}" if isinstance(same[m], str) and same[m] else ""
        labels.append(f"{m}{extra} (n={int(n) if np.isfinite(n) else 0})")
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=90, fontsize=7)
    ax.set_xlim(-0.6, len(methods) - 0.4)
    ax.set_ylim(*limits(shown, metric))
    plain_ticks(ax)
    ax.set_ylabel(f"{metric}  {direction(metric)}", fontsize=8)
    ax.set_title(f"{d}{' (stand-in)' if standin else ''}"
                 + (f"\n({off_axis})" if off_axis else ""), fontsize=10)
    return drew


def _comparison_baseline(ax, sd: pd.DataFrame, shown: list) -> tuple[str, bool]:
    """The trivial baseline: drawn when near the results (added to ``shown``), else stated in the
    panel's title; (that statement, whether it was drawn)."""
    base = (pd.to_numeric(sd["baseline_value"], errors="coerce").dropna()
            if "baseline_value" in sd else pd.Series(dtype=float))
    if not len(base):
        return "", False
    b = float(base.iloc[0])
    fin = [v for v in shown if np.isfinite(v)]
    span = (max(fin) - min(fin)) if fin else 0.0
    if fin and min(fin) - 0.5 * span - 1e-9 <= b <= max(fin) + 0.5 * span + 1e-9:
        ax.axhline(b, color="#b00000", ls="--", lw=1)
        shown.append(b)
        return "", True
    return f"trivial baseline {b:.4g}, off the axis", False


def fig_gate_entropy(history: pd.DataFrame, freeze: pd.DataFrame) -> plt.Figure:
    title = "Mean gate entropy over epochs (line: seed mean, band: seed min-max)"
    if history.empty or "mean_entropy" not in history:
        return no_data_figure(title, "history.csv is empty")
    h = history[history.method.isin(GATED_METHODS) & np.isfinite(history.mean_entropy)]
    if h.empty:
        return no_data_figure(title, "no gated method (autonorm / autonorm_s) with gate records")
    datasets = list(dict.fromkeys(h["dataset"]))
    pal = palette(order_methods(h["method"]))
    fig, axes = grid(len(datasets), ncols_max=4, w=3.8, h=3.0)
    handles: dict[str, object] = {}
    for ax, d in zip(axes, datasets):
        hd = h[h.dataset == d]
        drawn: dict[str, pd.Series] = {}
        for m in order_methods(hd["method"]):
            agg = hd[hd.method == m].groupby("epoch")["mean_entropy"].agg(
                ["mean", "min", "max"]).sort_index()
            twin = next((o for o, ser in drawn.items() if identical(ser, agg["mean"])), None)
            if twin is None:
                line, = ax.plot(agg.index, agg["mean"], marker="o", ms=3, color=pal[m], lw=1.6)
                ax.fill_between(agg.index, agg["min"], agg["max"], color=pal[m], alpha=0.2, lw=0)
                handles.setdefault(m, line)
            else:
                # the same runs under two names: draw the second visibly on top, and say so
                line, = ax.plot(agg.index, agg["mean"], ls="--", marker="s", ms=5, mfc="none",
                                color=pal[m], lw=1.2)
                handles.setdefault(f"{m} (identical to {twin}: same runs)", line)
            drawn[m] = agg["mean"]
            if not freeze.empty:
                fz = freeze[(freeze.dataset == d) & (freeze.method == m)]
                froze = fz[fz.froze.astype(str).str.lower() == "true"]
                for ep in sorted(set(froze["epoch"].dropna())):
                    vl = ax.axvline(ep, color=pal[m], ls="--", lw=1)
                    handles.setdefault(f"freeze epoch ({m})", vl)
        eps = np.nan
        if not freeze.empty:
            e = freeze.loc[freeze.dataset == d, "eps_h"].dropna()
            eps = float(e.iloc[0]) if len(e) else np.nan
        if np.isfinite(eps):
            el = ax.axhline(eps, color="grey", ls=":", lw=1.2)
            handles.setdefault(f"eps_H = {eps:g} (freeze threshold)", el)
        ll = ax.axhline(LN2, color="#888888", ls="-", lw=0.8)
        handles.setdefault("ln 2 = 0.693 (maximum entropy of two choices)", ll)
        ax.text(0.97, LN2 + 0.008, "ln 2", transform=ax.get_yaxis_transform(), ha="right",
                va="bottom", fontsize=7, color="#555555")  # inside the frame, above its line
        ax.set_ylim(-0.02, LN2 + 0.08)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("epoch")
        ax.set_ylabel("mean H (nats)")
        ax.set_title(d, fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    legend_below(fig, list(handles.values()), list(handles.keys()), ncol=3)
    return fig


def _choices(g: pd.DataFrame) -> set[str]:
    """The choice names of the gates in ``g`` (``choice_weights`` JSON; DyT / LN where not recorded)."""
    import json

    names: set[str] = set()
    for cw in (g["choice_weights"].dropna() if "choice_weights" in g else []):
        try:
            names |= set(json.loads(cw))
        except (TypeError, ValueError):
            continue
    return names or {"dyt", "ln"}


def fig_wdyt_heatmap(gates: pd.DataFrame, methods: Sequence[str] = GATED_METHODS) -> plt.Figure:
    title = "w_DyT per selector at the end of training (seed mean; 1 = DyT, 0 = LN)"
    if gates.empty:
        return no_data_figure(title, "gates.csv is empty")
    g = gates[gates.method.isin(methods) & np.isfinite(gates.w_dyt)]
    if g.empty:
        return no_data_figure(title, f"no gate records for {', '.join(methods)}")
    last = g.groupby(["dataset", "method", "seed"])["epoch"].transform("max")
    g = g[g.epoch == last]
    others = sorted(_choices(g) - {"dyt"})
    if others != ["ln"]:  # a gate whose other branch is not LayerNorm: 0 names what it is
        title = f"w_DyT per selector at the end of training (seed mean; 1 = DyT, 0 = {' / '.join(others)})"
    cols: dict[str, pd.Series] = {}
    for d in dict.fromkeys(g["dataset"]):
        for m in order_methods(g.loc[g.dataset == d, "method"]):
            col = g[(g.dataset == d) & (g.method == m)].groupby("selector")["w_dyt"].mean()
            twin = next((k for k, v in cols.items() if k.startswith(d + " / ")
                         and v.index.equals(col.index)
                         and np.allclose(v.to_numpy(float), col.to_numpy(float), atol=1e-9)), None)
            if twin is not None:  # same runs under two names: one column, both names
                cols[f"{twin} = {m}"] = cols.pop(twin)
                continue
            cols[f"{d} / {m}"] = col
    mat = pd.DataFrame(cols)
    layer_of = g.drop_duplicates("selector").set_index("selector")[["layer", "sublayer"]]
    order = sorted(mat.index, key=lambda s: (layer_of.loc[s, "layer"]
                                             if np.isfinite(layer_of.loc[s, "layer"]) else 1e9,
                                             str(layer_of.loc[s, "sublayer"])))
    mat = mat.loc[order]
    nrows, ncols = mat.shape
    # sized from the counts: every row and column gets room for a readable value, and the
    # vertical column labels get their own room below (7 pt text is ~0.06 in per character)
    label_in = 0.06 * max(len(str(c)) for c in mat.columns) + 0.5
    width = 2.0 + 0.06 * max(len(str(r)) for r in mat.index) + max(0.85 * ncols, 2.5)
    fig, ax = plt.subplots(figsize=(width, 1.0 + max(0.32 * nrows, 1.6) + label_in))
    ax.set_facecolor("#dddddd")  # selectors a model does not have (shallower family)
    annot_size = 7 if ncols <= 24 else 5
    try:
        import seaborn as sns

        sns.heatmap(mat, ax=ax, vmin=0, vmax=1, cmap="viridis", annot=True, fmt=".2f",
                    annot_kws={"fontsize": annot_size},
                    cbar_kws={"label": "w_DyT", "shrink": 0.6 if nrows > 8 else 1.0},
                    mask=mat.isna(), linewidths=0.4, linecolor="white")
    except ImportError:  # pragma: no cover
        im = ax.imshow(mat.to_numpy(float), vmin=0, vmax=1, aspect="auto")
        fig.colorbar(im, ax=ax, label="w_DyT")
    ax.set_yticks(np.arange(nrows) + 0.5)
    ax.set_yticklabels(list(mat.index), rotation=0, fontsize=7)
    ax.set_xticks(np.arange(ncols) + 0.5)
    # vertical labels: their boxes are exact, so "no overlap" can be checked (and holds)
    ax.set_xticklabels(list(mat.columns), rotation=90, fontsize=7)
    ax.grid(False)
    ax.set_xlabel("dataset / method")
    ax.set_ylabel("selector")
    ax.set_title(title + ("\ngrey: the model of that dataset has no such selector"
                          if mat.isna().any().any() else ""), fontsize=9)
    fig.tight_layout()
    return fig


def fig_metric_vs_entropy(history: pd.DataFrame) -> plt.Figure:
    title = "Validation metric against mean gate entropy (one point per epoch, seed mean)"
    if history.empty or "mean_entropy" not in history:
        return no_data_figure(title, "history.csv is empty")
    h = history[history.method.isin(GATED_METHODS) & np.isfinite(history.mean_entropy)
                & np.isfinite(history.val_metric)]  # ablation variants have their own figures
    if h.empty:
        return no_data_figure(title, "no epochs with both gate entropy and a validation metric")
    datasets = list(dict.fromkeys(h["dataset"]))
    pal = palette(order_methods(h["method"]))
    fig, axes = grid(len(datasets), ncols_max=4, w=3.8, h=3.2)
    handles: dict[str, object] = {}
    for ax, d in zip(axes, datasets):
        hd = h[h.dataset == d]
        drawn: dict[str, pd.DataFrame] = {}
        xs, ys = [], []
        for m in order_methods(hd["method"]):
            agg = hd[hd.method == m].groupby("epoch")[["mean_entropy", "val_metric"]].mean()
            agg = agg.sort_index()
            twin = next((o for o, a in drawn.items()
                         if identical(a["mean_entropy"], agg["mean_entropy"])
                         and identical(a["val_metric"], agg["val_metric"])), None)
            if twin is None:
                ax.plot(agg["mean_entropy"], agg["val_metric"], "-", color=pal[m], alpha=0.5, lw=1)
                sc = ax.scatter(agg["mean_entropy"], agg["val_metric"], color=pal[m], s=16,
                                zorder=3)
                handles.setdefault(m, sc)
            else:
                sc = ax.scatter(agg["mean_entropy"], agg["val_metric"], s=70, facecolors="none",
                                edgecolors=pal[m], linewidths=1.4, zorder=4)
                handles.setdefault(f"{m} (identical to {twin}: same runs)", sc)
            drawn[m] = agg
            xs += list(agg["mean_entropy"])
            ys += list(agg["val_metric"])
            # first epoch labelled below-left of its point, last above-right: off the markers
            for ep, xy, ha in ((agg.index.min(), (-5, -10), "right"), (agg.index.max(), (5, 5), "left")):
                ax.annotate(f"e{int(ep)}", (agg.loc[ep, "mean_entropy"], agg.loc[ep, "val_metric"]),
                            fontsize=6, color=pal[m], xytext=xy, textcoords="offset points", ha=ha,
                            annotation_clip=True,
                            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})
        names = hd["val_metric_name"].dropna()
        metric = str(names.iloc[0]) if len(names) else "metric"
        # room around the points so the epoch labels stay inside the frame
        x0, x1 = limits(xs, "entropy", 0.15)
        ax.set_xlim(max(x0, -0.02), min(x1, LN2 + 0.05))
        ax.set_ylim(*limits(ys, metric, 0.18))
        plain_ticks(ax)
        ax.set_xlabel("mean gate entropy H (nats)")
        ax.set_ylabel(f"val {metric}  {direction(metric)}", fontsize=8)
        ax.set_title(d, fontsize=10)
    fig.suptitle(title + "; eN = epoch N", fontsize=11)
    fig.tight_layout()
    legend_below(fig, list(handles.values()), list(handles.keys()), ncol=4)
    return fig


def fig_corruptions(corr: pd.DataFrame, severity: int = 3) -> plt.Figure:
    title = "Corruption robustness"
    if corr.empty:
        return no_data_figure(title, "corruptions.csv is empty (no corruption set evaluated)")
    datasets = list(dict.fromkeys(corr["dataset"]))
    d = "cifar10" if "cifar10" in datasets else datasets[0]
    c = corr[(corr.dataset == d) & np.isfinite(corr.accuracy)]
    if c.empty:
        return no_data_figure(title, f"no finite accuracies for {d}")
    standin = bool(c["standin"].astype(str).str.lower().eq("true").any()) if "standin" in c else False
    generated = (bool(c["corruption_generated"].astype(str).str.lower().eq("true").any())
                 if "corruption_generated" in c else False)
    cset = c["corruption_set"].iloc[0] if "corruption_set" in c else d
    methods = order_methods(c["method"])
    pal = palette(methods)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.4), gridspec_kw={"width_ratios": [2.4, 1]})
    s3 = c[c.severity == severity]
    corrs = list(dict.fromkeys(s3["corruption"]))
    width = 0.8 / max(1, len(methods))
    handles = []
    if corrs:
        piv = s3.groupby(["corruption", "method"])["accuracy"].agg(["mean", "std"])
        x = np.arange(len(corrs))
        for i, m in enumerate(methods):
            mean = [piv["mean"].get((cn, m), np.nan) for cn in corrs]
            sd = [piv["std"].get((cn, m), np.nan) for cn in corrs]
            b = a1.bar(x + (i - (len(methods) - 1) / 2) * width, mean, width,
                       yerr=np.nan_to_num(sd, nan=0.0), color=pal[m], capsize=1.5,
                       error_kw={"lw": 0.8})
            handles.append((b, m))
        a1.set_xticks(x)
        a1.set_xticklabels(corrs, rotation=90, fontsize=8)
        a1.set_xlim(-0.6, len(corrs) - 0.4)
        a1.set_ylim(0, 100)
        a1.set_ylabel("accuracy (%) (higher is better)")
        a1.set_title(f"severity {severity}, per corruption (bar: seed mean, whisker: sd)",
                     fontsize=9)
    else:
        a1.set_axis_off()
        a1.text(0.5, 0.5, f"{NO_DATA}\n(no severity {severity})", ha="center", va="center",
                transform=a1.transAxes)
    per_seed = c.groupby(["method", "seed", "severity"])["accuracy"].mean().reset_index()
    for m in methods:
        agg = per_seed[per_seed.method == m].groupby("severity")["accuracy"].agg(
            ["mean", "min", "max"])
        line, = a2.plot(agg.index, agg["mean"], marker="o", color=pal[m])
        a2.fill_between(agg.index, agg["min"], agg["max"], color=pal[m], alpha=0.2, lw=0)
        if not corrs:
            handles.append((line, m))
    sev = sorted(int(v) for v in set(c["severity"]))
    a2.set_xticks(sev)
    a2.set_xlim(min(sev) - 0.3, max(sev) + 0.3)
    lo, hi = limits(per_seed["accuracy"], "accuracy", 0.1)
    a2.set_ylim(lo, hi)
    a2.set_xlabel("severity")
    a2.set_ylabel("mean accuracy over corruptions (%)\n(higher is better)")
    a2.set_title("accuracy against severity (band: seed min-max)", fontsize=9)
    what = ("the official CIFAR-10-C" if (d == "cifar10" and not generated and not standin)
            else "corruptions generated by our code; not CIFAR-10-C")
    fig.suptitle(f"{title}: models trained on {d}, corruption set {cset} ({what})", fontsize=11)
    fig.tight_layout()
    legend_below(fig, [h for h, _ in handles], [m for _, m in handles],
                 ncol=min(len(handles), 8))
    return fig


# --------------------------------------------------------------------------- driver
def make_figures(tables: str | Path, out_dir: str | Path, strict: bool = False) -> list[Path]:
    """Write every figure of ``output_names.FIGURES`` (the files of ``FIGURE_NAMES``) into
    ``out_dir``, then the ablation figures; returns the paths.

    A figure whose drawing raises is replaced by a no-data panel naming the
    error, so one bad table never removes the other figures (the error is
    also printed).  ``strict=True`` re-raises instead (used by the tests).
    """
    require_folder(tables, "autonorm-aggregate (rule aggregate)")
    with plt.rc_context():  # the theme is this function's, not the process's
        style()
        return _make_figures(Path(tables), Path(out_dir), strict)


def _make_figures(tables: Path, out_dir: Path, strict: bool) -> list[Path]:
    tables, out_dir = Path(tables), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    frames = {name: read_table(tables, name)
              for name in dict.fromkeys(t for spec in FIGURES.values() for t in spec["tables"])}
    written: list[Path] = []
    for stem, spec in FIGURES.items():
        try:
            draw = globals()[spec["draw"]]  # the registry names it (output_names imports nothing)
            fig = draw(*(frames[t] for t in spec["tables"]))
        except Exception as exc:  # noqa: BLE001 - keep the DAG's outputs complete
            if strict:
                raise
            print(f"autonorm-figures: {stem} failed ({type(exc).__name__}: {exc})")
            plt.close("all")
            fig = no_data_figure(stem, f"drawing failed: {type(exc).__name__}: {exc}"[:120])
        written.extend(save(fig, out_dir, stem))
    written.extend(make_ablation_figures(read_table(tables, "ablations.csv"), out_dir, strict))
    return written


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-figures",
                                description="Draw the report figures from the aggregate tables.")
    p.add_argument("--tables", required=True, help="folder with the csvs of autonorm-aggregate")
    p.add_argument("--out-dir", required=True, help="folder for the figures")
    return p


def main(argv: Iterable[str] | None = None) -> int:
    """The command line (``autonorm-figures``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from ..cli import guarded

    return guarded("autonorm-figures", _main, argv)


def _main(argv: Iterable[str] | None = None) -> int:
    args = build_parser().parse_args(None if argv is None else list(argv))
    written = make_figures(args.tables, args.out_dir)
    print(f"autonorm-figures: wrote {len(written)} files to {args.out_dir}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
