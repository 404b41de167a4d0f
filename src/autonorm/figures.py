"""Figures drawn from the aggregate tables (PNG and PDF).

Why a fixed list: Snakemake must name every output of the figures rule in
advance, so :data:`FIGURE_NAMES` is the complete, documented list of files
this module writes, and every one of them is written on every call.  When a
figure's data is absent in a run (e.g. no gated method was trained, or no
corruption set was evaluated), the file still exists and shows a panel that
says "no data for this figure in this run" instead of failing the DAG.

Figures (all read only the CSVs from ``autonorm-aggregate``):

``method_comparison``  per dataset, the mean of the primary metric per method
                       with 95% t-CI error bars; the paper's value (paper
                       datasets only) drawn as a black cross beside ours.
``gate_entropy``       mean gate entropy over epochs for autonorm / autonorm_s,
                       the line is the mean over seeds, the band the min..max
                       over seeds; eps_H (dotted) and the freeze epoch
                       (dashed) marked, ln 2 as the upper bound.
``wdyt_heatmap``       mean w_DyT per selector (rows) and dataset (columns) at
                       the last epoch, averaged over seeds, for autonorm_s.
``metric_vs_entropy``  validation metric against mean gate entropy, one point
                       per epoch (seed-mean), per dataset.
``corruptions``        accuracy per corruption at severity 3, and mean accuracy
                       against severity, per method, for cifar10 when present,
                       otherwise the first corruption-evaluated dataset.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Callable, Iterable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from autonorm.io_utils import read_table, save_figure_atomic  # noqa: E402

FIGURE_STEMS = ["method_comparison", "gate_entropy", "wdyt_heatmap", "metric_vs_entropy",
                "corruptions"]
FIGURE_FORMATS = ["png", "pdf"]
#: every file written by :func:`make_figures`, relative to ``--out-dir``
FIGURE_NAMES = [f"{s}.{e}" for s in FIGURE_STEMS for e in FIGURE_FORMATS]

NO_DATA = "no data for this figure in this run"
GATED_METHODS = ("autonorm", "autonorm_s", "autonorm3")
PRIMARY_BY_PRIORITY = ("accuracy", "rmse", "tag_perplexity", "mean_s3")
METHOD_ORDER = ["autonorm_s", "autonorm", "autonorm3", "frozen_ln", "dyt", "random", "adanorm",
                "film", "teacher_mlp"]
LN2 = math.log(2.0)


# --------------------------------------------------------------------------- helpers
def _style() -> None:
    try:
        import seaborn as sns

        sns.set_theme(style="whitegrid", context="paper")
    except ImportError:  # pragma: no cover - seaborn is a dependency, but figures must not fail
        plt.style.use("default")


def _palette(methods: Sequence[str]) -> dict:
    try:
        import seaborn as sns

        cols = sns.color_palette("tab10", n_colors=max(len(METHOD_ORDER), len(methods)))
    except ImportError:  # pragma: no cover
        cols = [plt.cm.tab10(i % 10) for i in range(max(len(METHOD_ORDER), len(methods)))]
    known = {m: cols[i] for i, m in enumerate(METHOD_ORDER)}
    extra = [m for m in methods if m not in known]
    for j, m in enumerate(extra):
        known[m] = cols[(len(METHOD_ORDER) + j) % len(cols)]
    return known


def _order_methods(methods: Iterable[str]) -> list[str]:
    ms = list(dict.fromkeys(methods))
    return sorted(ms, key=lambda m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else 99, m))


def _grid(n: int, ncols_max: int = 3, w: float = 4.2, h: float = 3.3):
    ncols = max(1, min(ncols_max, n))
    nrows = max(1, math.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def no_data_figure(title: str, reason: str = "") -> plt.Figure:
    """A figure that says plainly that its data is absent in this run."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.set_axis_off()
    ax.add_patch(plt.Rectangle((0.02, 0.05), 0.96, 0.9, transform=ax.transAxes, fill=True,
                               facecolor="#f3f3f3", edgecolor="#999999", lw=1.5))
    ax.text(0.5, 0.62, title, ha="center", va="center", fontsize=13, weight="bold",
            transform=ax.transAxes)
    ax.text(0.5, 0.42, NO_DATA, ha="center", va="center", fontsize=12, color="#b00000",
            transform=ax.transAxes)
    if reason:
        ax.text(0.5, 0.25, reason, ha="center", va="center", fontsize=9, color="#444444",
                transform=ax.transAxes, wrap=True)
    return fig


def _save(fig: plt.Figure, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    for ext in FIGURE_FORMATS:
        kw = {"dpi": 150, "bbox_inches": "tight"}
        if ext == "pdf":
            kw["metadata"] = {"CreationDate": None}  # reproducible bytes
        paths.append(save_figure_atomic(fig, out_dir / f"{stem}.{ext}", **kw))
    plt.close(fig)
    return paths


def _primary_metric(metrics: Iterable[str]) -> str | None:
    ms = set(metrics)
    for m in PRIMARY_BY_PRIORITY:
        if m in ms:
            return m
    return None


# --------------------------------------------------------------------------- figures
def fig_method_comparison(summary: pd.DataFrame) -> plt.Figure:
    title = "Method comparison (mean, 95% CI; x = paper)"
    if summary.empty or not (summary["n"] > 0).any():
        return no_data_figure(title, "summary.csv has no run with a result")
    panels = []
    for d in dict.fromkeys(summary["dataset"]):
        sd = summary[summary.dataset == d]
        metric = _primary_metric(sd.loc[sd.n > 0, "metric"])
        if metric is not None:
            panels.append((d, metric, sd[sd.metric == metric]))
    if not panels:
        return no_data_figure(title, "no primary metric (accuracy / rmse / perplexity) found")
    all_methods = _order_methods(summary["method"])
    pal = _palette(all_methods)
    fig, axes = _grid(len(panels))
    for ax, (d, metric, sd) in zip(axes, panels):
        methods = _order_methods(sd["method"])
        sd = sd.set_index("method").loc[methods]
        x = np.arange(len(methods))
        means = sd["mean"].to_numpy(float)
        lo = means - sd["ci95_low"].to_numpy(float)
        hi = sd["ci95_high"].to_numpy(float) - means
        err = np.vstack([np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=0.0)])
        for i, m in enumerate(methods):
            if np.isfinite(means[i]):
                ax.errorbar(x[i] - 0.12, means[i], yerr=err[:, i:i + 1], fmt="o", capsize=3,
                            color=pal[m], ms=6, label=None)
            pm = sd["paper_mean"].iloc[i]
            if np.isfinite(pm):
                ps = sd["paper_std"].iloc[i]
                ax.errorbar(x[i] + 0.12, pm, yerr=(ps if np.isfinite(ps) else None), fmt="x",
                            color="black", ms=7, capsize=2)
            n = sd["n"].iloc[i]
            if not np.isfinite(means[i]):
                ax.text(x[i], 0.02, "n=0", transform=ax.get_xaxis_transform(), ha="center",
                        fontsize=7, color="#b00000")
            else:
                ax.text(x[i], 0.02, f"n={int(n)}", transform=ax.get_xaxis_transform(),
                        ha="center", fontsize=7, color="#555555")
        standin = bool(sd["standin"].astype(bool).any())
        ax.set_xticks(x)
        ax.set_xticklabels(methods, rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(metric)
        ax.set_title(f"{d}{' (stand-in)' if standin else ''}", fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def fig_gate_entropy(history: pd.DataFrame, freeze: pd.DataFrame) -> plt.Figure:
    title = "Mean gate entropy over epochs"
    if history.empty or "mean_entropy" not in history:
        return no_data_figure(title, "history.csv is empty")
    h = history[history.method.isin(GATED_METHODS) & np.isfinite(history.mean_entropy)]
    if h.empty:
        return no_data_figure(title, "no gated method (autonorm / autonorm_s) with gate records")
    datasets = list(dict.fromkeys(h["dataset"]))
    pal = _palette(_order_methods(h["method"]))
    fig, axes = _grid(len(datasets))
    for ax, d in zip(axes, datasets):
        hd = h[h.dataset == d]
        for m in _order_methods(hd["method"]):
            g = hd[hd.method == m].groupby("epoch")["mean_entropy"]
            agg = g.agg(["mean", "min", "max"]).sort_index()
            ax.plot(agg.index, agg["mean"], marker="o", ms=3, color=pal[m], label=m)
            ax.fill_between(agg.index, agg["min"], agg["max"], color=pal[m], alpha=0.2, lw=0)
            fz = freeze[(freeze.dataset == d) & (freeze.method == m)] if not freeze.empty else freeze
            if fz is not None and not fz.empty:
                froze = fz[fz.froze.astype(str).str.lower() == "true"]
                for ep in sorted(set(froze["epoch"].dropna())):
                    ax.axvline(ep, color=pal[m], ls="--", lw=1)
                    ax.text(ep, 0.98, f" freeze ({m})", rotation=90, va="top", fontsize=6,
                            color=pal[m], transform=ax.get_xaxis_transform())
        eps = np.nan
        if not freeze.empty:
            e = freeze.loc[freeze.dataset == d, "eps_h"].dropna()
            eps = float(e.iloc[0]) if len(e) else np.nan
        if np.isfinite(eps):
            ax.axhline(eps, color="grey", ls=":", lw=1.2, label=f"eps_H = {eps:g}")
        ax.axhline(LN2, color="#bbbbbb", ls="-", lw=0.8)
        ax.set_ylim(-0.02, LN2 + 0.05)
        ax.set_xlabel("epoch")
        ax.set_ylabel("mean H (nats)")
        ax.set_title(d, fontsize=10)
        ax.legend(fontsize=7, loc="upper right")
    fig.suptitle(title + " (line: seed mean, band: min-max over seeds)", fontsize=11)
    fig.tight_layout()
    return fig


def fig_wdyt_heatmap(gates: pd.DataFrame, method: str = "autonorm_s") -> plt.Figure:
    title = f"Mean w_DyT per layer at the end of training ({method})"
    if gates.empty:
        return no_data_figure(title, "gates.csv is empty")
    g = gates[(gates.method == method) & np.isfinite(gates.w_dyt)]
    if g.empty:
        return no_data_figure(title, f"no gate records for {method}")
    last = g.groupby(["dataset", "seed"])["epoch"].transform("max")
    g = g[g.epoch == last]
    mat = g.groupby(["selector", "dataset"])["w_dyt"].mean().unstack("dataset")
    layer_of = g.drop_duplicates("selector").set_index("selector")[["layer", "sublayer"]]
    order = sorted(mat.index, key=lambda s: (layer_of.loc[s, "layer"]
                                             if np.isfinite(layer_of.loc[s, "layer"]) else 1e9,
                                             str(layer_of.loc[s, "sublayer"])))
    mat = mat.loc[order, list(dict.fromkeys(g["dataset"]))]
    fig, ax = plt.subplots(figsize=(1.6 + 1.2 * mat.shape[1], 0.9 + 0.32 * mat.shape[0]))
    try:
        import seaborn as sns

        sns.heatmap(mat, ax=ax, vmin=0, vmax=1, cmap="viridis", annot=mat.shape[1] <= 12,
                    fmt=".2f", annot_kws={"fontsize": 6}, cbar_kws={"label": "w_DyT"},
                    mask=mat.isna())
    except ImportError:  # pragma: no cover
        im = ax.imshow(mat.to_numpy(float), vmin=0, vmax=1, aspect="auto")
        fig.colorbar(im, ax=ax, label="w_DyT")
    ax.grid(False)
    ax.set_xlabel("dataset")
    ax.set_ylabel("selector (layer.sublayer)")
    ax.set_title(title + "\n(seed mean; 1 = DyT, 0 = LN)", fontsize=10)
    fig.tight_layout()
    return fig


def fig_metric_vs_entropy(history: pd.DataFrame) -> plt.Figure:
    title = "Validation metric against mean gate entropy"
    if history.empty or "mean_entropy" not in history:
        return no_data_figure(title, "history.csv is empty")
    h = history[np.isfinite(history.mean_entropy) & np.isfinite(history.val_metric)]
    if h.empty:
        return no_data_figure(title, "no epochs with both gate entropy and a validation metric")
    datasets = list(dict.fromkeys(h["dataset"]))
    pal = _palette(_order_methods(h["method"]))
    fig, axes = _grid(len(datasets))
    for ax, d in zip(axes, datasets):
        hd = h[h.dataset == d]
        for m in _order_methods(hd["method"]):
            agg = hd[hd.method == m].groupby("epoch")[["mean_entropy", "val_metric"]].mean()
            agg = agg.sort_index()
            ax.plot(agg["mean_entropy"], agg["val_metric"], "-", color=pal[m], alpha=0.5, lw=1)
            ax.scatter(agg["mean_entropy"], agg["val_metric"], color=pal[m], s=16, label=m,
                       zorder=3)
            for ep in (agg.index.min(), agg.index.max()):
                ax.annotate(f"e{int(ep)}", (agg.loc[ep, "mean_entropy"], agg.loc[ep, "val_metric"]),
                            fontsize=6, color=pal[m], xytext=(3, 3), textcoords="offset points")
        names = hd["val_metric_name"].dropna()
        ax.set_xlabel("mean gate entropy H (nats)")
        ax.set_ylabel(f"val {names.iloc[0] if len(names) else 'metric'}")
        ax.set_title(d, fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle(title + " (one point per epoch, seed mean; eN = epoch N)", fontsize=11)
    fig.tight_layout()
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
    cset = c["corruption_set"].iloc[0] if "corruption_set" in c else d
    methods = _order_methods(c["method"])
    pal = _palette(methods)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.2), gridspec_kw={"width_ratios": [2.2, 1]})
    s3 = c[c.severity == severity]
    corrs = list(dict.fromkeys(s3["corruption"]))
    width = 0.8 / max(1, len(methods))
    if corrs:
        piv = s3.groupby(["corruption", "method"])["accuracy"].agg(["mean", "std"])
        x = np.arange(len(corrs))
        for i, m in enumerate(methods):
            mean = [piv["mean"].get((cn, m), np.nan) for cn in corrs]
            sd = [piv["std"].get((cn, m), np.nan) for cn in corrs]
            a1.bar(x + (i - (len(methods) - 1) / 2) * width, mean, width,
                   yerr=np.nan_to_num(sd, nan=0.0), color=pal[m], label=m, capsize=1.5)
        a1.set_xticks(x)
        a1.set_xticklabels(corrs, rotation=45, ha="right", fontsize=8)
        a1.set_ylabel("accuracy (%)")
        a1.set_title(f"severity {severity} per corruption (bar: mean, line: sd over seeds)",
                     fontsize=9)
        a1.legend(fontsize=7, ncol=2)
    else:
        a1.set_axis_off()
        a1.text(0.5, 0.5, f"{NO_DATA}\n(no severity {severity})", ha="center", va="center",
                transform=a1.transAxes)
    per_seed = c.groupby(["method", "seed", "severity"])["accuracy"].mean().reset_index()
    for m in methods:
        agg = per_seed[per_seed.method == m].groupby("severity")["accuracy"].agg(["mean", "min",
                                                                                  "max"])
        a2.plot(agg.index, agg["mean"], marker="o", color=pal[m], label=m)
        a2.fill_between(agg.index, agg["min"], agg["max"], color=pal[m], alpha=0.2, lw=0)
    a2.set_xlabel("severity")
    a2.set_ylabel("mean accuracy over corruptions (%)")
    a2.set_title("accuracy against severity (band: seed min-max)", fontsize=9)
    fig.suptitle(f"{title}: {d} / {cset}{' (stand-in / generated)' if standin else ''}",
                 fontsize=11)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- driver
def make_figures(tables: str | Path, out_dir: str | Path, strict: bool = False) -> list[Path]:
    """Write every file of :data:`FIGURE_NAMES` into ``out_dir``; returns the paths.

    A figure whose drawing raises is replaced by a no-data panel naming the
    error, so one bad table never removes the other figures (the error is
    also printed).  ``strict=True`` re-raises instead (used by the tests).
    """
    _style()
    tables, out_dir = Path(tables), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = read_table(tables, "summary.csv")
    history = read_table(tables, "history.csv")
    gates = read_table(tables, "gates.csv")
    freeze = read_table(tables, "freeze.csv")
    corr = read_table(tables, "corruptions.csv")
    makers: dict[str, Callable[[], plt.Figure]] = {
        "method_comparison": lambda: fig_method_comparison(summary),
        "gate_entropy": lambda: fig_gate_entropy(history, freeze),
        "wdyt_heatmap": lambda: fig_wdyt_heatmap(gates),
        "metric_vs_entropy": lambda: fig_metric_vs_entropy(history),
        "corruptions": lambda: fig_corruptions(corr),
    }
    written: list[Path] = []
    for stem in FIGURE_STEMS:
        try:
            fig = makers[stem]()
        except Exception as exc:  # noqa: BLE001 - keep the DAG's outputs complete
            if strict:
                raise
            print(f"autonorm-figures: {stem} failed ({type(exc).__name__}: {exc})")
            plt.close("all")
            fig = no_data_figure(stem, f"drawing failed: {type(exc).__name__}: {exc}"[:120])
        written.extend(_save(fig, out_dir, stem))
    return written


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-figures",
                                description="Draw the report figures from the aggregate tables.")
    p.add_argument("--tables", required=True, help="folder with the csvs of autonorm-aggregate")
    p.add_argument("--out-dir", required=True, help="folder for the figures")
    return p


def main(argv: Iterable[str] | None = None) -> int:
    args = build_parser().parse_args(None if argv is None else list(argv))
    written = make_figures(args.tables, args.out_dir)
    print(f"autonorm-figures: wrote {len(written)} files to {args.out_dir}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
