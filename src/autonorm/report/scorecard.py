"""The scorecard: per dataset, each method's test metric, ours beside the paper's, as a table and a picture.

It reads one aggregate summary table (``tables/summary.csv`` of a run, or a study record's): the paper's
mean ± SD over its 5 seeds (``paper_mean``, ``paper_std``), ours as mean ± SD with its 95% t-interval
and n, and each method's difference from frozen_ln (a difference of the means, ours and the paper's;
the paired tests are the ledger's and the report's). A stand-in dataset (the smoke preset's) has no paper
number beside it: its card shows ours alone. The findings page draws one card per study in the paper's
regime; a pipeline run's report opens with one card per dataset.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from autonorm.analysis import stats
from autonorm.methods import METHODS
from autonorm.report.fmt import fmt, fnum, md_table, pretty, truthy

#: the metric a card shows: the dataset's first of these that the summary has
CARD_METRICS = ("accuracy", "rmse")
#: the reference every difference is taken from: the paper's static LayerNorm
BASE = "frozen_ln"
#: ours only, beside the paper's methods: the paper's tables give no Random Selector, but its text compares it
EXTRA = ("random",)


@dataclass(frozen=True)
class Line:
    """One method of a card: the paper's mean and SD (NaN where it gives none), ours (mean, SD, 95% CI, n)
    and the difference of the means from frozen_ln, ours and the paper's."""
    method: str
    paper_mean: float
    paper_sd: float
    mean: float
    sd: float
    lo: float
    hi: float
    n: int
    diff: float
    paper_diff: float


@dataclass(frozen=True)
class Card:
    """One dataset's card: its metric, whether the paper's numbers apply (not a stand-in), its lines."""
    dataset: str
    metric: str
    with_paper: bool
    lines: tuple[Line, ...]
    title: str = ""

    @property
    def higher_is_better(self) -> bool:
        return stats.higher_is_better(self.metric)


def card(summary: pd.DataFrame, d: str, title: str = "", paper_methods_only: bool = True) -> Card | None:
    """The card of dataset ``d`` from a summary table; None where no method has a run of its metric.
    ``paper_methods_only``: only the methods of the paper's table (and :data:`EXTRA`), where the paper's
    numbers apply; a stand-in dataset shows every method we ran."""
    s = summary[(summary.dataset == d) & (summary.get("source_dataset", summary.dataset) == d)] \
        if "source_dataset" in summary else summary[summary.dataset == d]
    metric = next((m for m in CARD_METRICS if ((s.metric == m) & (s["n"].fillna(0) > 0)).any()), None)
    if metric is None:
        return None
    s = s[(s.metric == metric) & (s["n"].fillna(0) > 0)].set_index("method")
    standin = bool(s["standin"].map(truthy).any()) if "standin" in s else False
    paper = (s["paper_mean"].map(fnum) if "paper_mean" in s else pd.Series(math.nan, index=s.index))
    with_paper = not standin and bool(paper.map(math.isfinite).any())
    # frozen_ln, AutoNorm-S, the paper's other methods, then ours alone (the Random Selector)
    first = [m for m in (BASE, "autonorm_s") if m in s.index]
    order = first + [m for m in METHODS if m in s.index and m not in first and m not in EXTRA] + \
        [m for m in s.index if m not in METHODS] + [m for m in EXTRA if m in s.index]
    if with_paper and paper_methods_only:
        order = [m for m in order if math.isfinite(paper[m]) or m in EXTRA]

    def value(m: str, col: str) -> float:
        return fnum(s.at[m, col]) if col in s and m in s.index else math.nan

    base, pbase = value(BASE, "mean"), (value(BASE, "paper_mean") if with_paper else math.nan)
    lines = []
    for m in order:
        pm, psd = (value(m, "paper_mean"), value(m, "paper_std")) if with_paper else (math.nan, math.nan)
        mean = value(m, "mean")
        lines.append(Line(m, pm, psd, mean, value(m, "std"), value(m, "ci95_low"), value(m, "ci95_high"),
                          int(value(m, "n") or 0), mean - base if m != BASE else math.nan,
                          pm - pbase if m != BASE else math.nan))
    return Card(d, metric, with_paper, tuple(lines), title) if lines else None


def label(method: str) -> str:
    """A method as a table names it: one that is not a transformer (the Teacher MLP) says so, so that a row
    beside AutoNorm-S is not read as a transformer of the same size."""
    meth = METHODS.get(method)
    return method if meth is None or meth.backbone == "transformer" else \
        f"{method} (a plain {meth.backbone.upper()}; not a transformer)"


def _pm(mean: float, sd: float) -> str:
    if not math.isfinite(mean):
        return "–"
    return fmt(mean) + (f" ± {sd:.2g}" if math.isfinite(sd) else "")


def _diff(x: float) -> str:
    return f"{x:+.3g}" if math.isfinite(x) else "–"


def card_table(c: Card) -> str:
    """The card as a markdown table (a stand-in's without the paper's columns)."""
    arrow = "higher is better" if c.higher_is_better else "lower is better"
    head = ["method"] + (["the paper: mean ± SD (5 seeds)"] if c.with_paper else []) + \
        ["ours: mean ± SD", "ours: 95% CI", "n", f"Δ from {BASE}: ours"] + \
        ([f"Δ from {BASE}: the paper"] if c.with_paper else [])
    rows = []
    for ln in c.lines:
        shown = label(ln.method) + (" (not in the paper's tables)" if c.with_paper and not math.isfinite(ln.paper_mean)
                                    else "")
        ci = f"[{fmt(ln.lo)}, {fmt(ln.hi)}]" if math.isfinite(ln.lo) and math.isfinite(ln.hi) else "– (n=1)"
        rows.append([shown] + ([_pm(ln.paper_mean, ln.paper_sd)] if c.with_paper else [])
                    + [_pm(ln.mean, ln.sd), ci, str(ln.n), _diff(ln.diff)]
                    + ([_diff(ln.paper_diff)] if c.with_paper else []))
    what = f"{pretty(c.dataset)}, test {c.metric} ({arrow})" + (f": {c.title}" if c.title else "")
    note = ("" if c.with_paper else " A stand-in dataset: no paper number is set beside it.")
    return f"**{what}.**{note}\n\n" + md_table(head, rows)


PAPER_LABEL = "the paper: mean ± SD over its 5 seeds"
OURS_LABEL = "ours: mean with its 95% CI"
CAPTION = ("The scorecard: per dataset, each method's test metric, the paper's mean with its ± SD over 5 seeds "
           "(open marker, grey bar) beside ours with its 95% CI (filled marker). A method the paper's tables do not "
           "list is drawn ours alone. The differences from frozen_ln and the paired tests are in the table above and "
           "in the ledger.")


def draw(cards: list[Card], path: str | Path) -> bool:
    """Draw the cards side by side (one panel each); False where there is nothing to draw."""
    cards = [c for c in cards if c.lines]
    if not cards:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autonorm.io_utils import write_bytes_atomic

    with plt.style.context("default"):  # a PNG is a function of its data, whatever style the process set
        _draw(plt, cards, path, write_bytes_atomic)
    return True


def _draw(plt, cards: list[Card], path, write) -> None:
    import io

    rows = max(len(c.lines) for c in cards)
    fig, axes = plt.subplots(1, len(cards), figsize=(5.2 * len(cards), 1.5 + 0.62 * rows), squeeze=False)
    for ax, c in zip(axes[0], cards):
        names = [ln.method for ln in c.lines]
        for i, ln in enumerate(c.lines):
            y = len(names) - 1 - i
            if math.isfinite(ln.paper_mean):
                sd = ln.paper_sd if math.isfinite(ln.paper_sd) else 0.0
                ax.errorbar(ln.paper_mean, y + 0.17, xerr=sd, fmt="o", mfc="white", mec="0.35", ecolor="0.6",
                            capsize=3, ms=6, label=PAPER_LABEL)
            if math.isfinite(ln.mean):
                err = ([[ln.mean - ln.lo], [ln.hi - ln.mean]] if math.isfinite(ln.lo) and math.isfinite(ln.hi)
                       else None)
                ax.errorbar(ln.mean, y - 0.17, xerr=err, fmt="o", color="tab:blue", capsize=3, ms=6, label=OURS_LABEL)
                ax.annotate(f"n={ln.n}", (ln.mean, y - 0.17), xytext=(6, -10), textcoords="offset points",
                            fontsize=7, color="tab:blue")
        ticks = [ln.method + ("\n(ours only)" if c.with_paper and not math.isfinite(ln.paper_mean) else "")
                 + ("\n(a plain MLP)" if label(ln.method) != ln.method else "") for ln in c.lines]
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(ticks[::-1], fontsize=8)
        ax.set_ylim(-0.7, len(names) - 0.3)
        ax.set_xlabel(f"test {c.metric} ({'higher' if c.higher_is_better else 'lower'} is better)")
        ax.set_title(pretty(c.dataset) + (f"\n{c.title}" if c.title else ""), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    handles = {}
    for ax in axes.flat:
        for hd, lb in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lb, hd)
    fig.legend(list(handles.values()), list(handles), fontsize=8, loc="lower center", ncol=len(handles),
               frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png", metadata={"Software": None})  # no version: byte-stable
    plt.close(fig)
    write(path, buf.getvalue())
