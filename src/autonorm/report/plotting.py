"""What every figure of the report shares: style, the method colours and order, panel grids and
limits, the "no data" panel, and atomic saving in every format (report.figures draws with them)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from autonorm.analysis import stats  # noqa: E402
from autonorm.io_utils import save_figure_atomic  # noqa: E402
from autonorm.methods import DISPLAY_ORDER  # noqa: E402
from autonorm.output_names import FIGURE_FORMATS  # noqa: E402

NO_DATA = "no data for this figure in this run"
PRIMARY_BY_PRIORITY = ("accuracy", "rmse", "tag_perplexity", "mean_s3")
METHOD_ORDER = list(DISPLAY_ORDER)  # colours are assigned in this order
LN2 = math.log(2.0)


# --------------------------------------------------------------------------- helpers
def style() -> None:
    try:
        import seaborn as sns

        sns.set_theme(style="whitegrid", context="paper")
    except ImportError:  # pragma: no cover - seaborn is a dependency, but figures must not fail
        plt.style.use("default")


#: each method's colour by its name (tab10 index): a method's colour does not move when another
#: method is added; a method not listed gets a colour from its name's checksum
METHOD_COLOURS = {"autonorm_s": 0, "autonorm": 1, "autonorm3": 2, "frozen_ln": 3, "dyt": 4, "random": 5,
                  "adanorm": 6, "film": 7, "teacher_mlp": 8}


def palette(methods: Sequence[str]) -> dict:
    import zlib

    try:
        import seaborn as sns

        cols = sns.color_palette("tab10", n_colors=10)
    except ImportError:  # pragma: no cover
        cols = [plt.cm.tab10(i) for i in range(10)]
    names = list(dict.fromkeys(list(METHOD_COLOURS) + list(methods)))
    return {m: cols[METHOD_COLOURS[m] if m in METHOD_COLOURS else zlib.crc32(m.encode()) % len(cols)] for m in names}


def order_methods(methods: Iterable[str]) -> list[str]:
    ms = list(dict.fromkeys(methods))
    return sorted(ms, key=lambda m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else 99, m))


def grid(n: int, ncols_max: int = 3, w: float = 4.2, h: float = 3.3):
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


def save(fig: plt.Figure, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    for ext in FIGURE_FORMATS:
        kw = {"dpi": 150, "bbox_inches": "tight"}
        if ext == "pdf":
            kw["metadata"] = {"CreationDate": None}  # reproducible bytes
        paths.append(save_figure_atomic(fig, out_dir / f"{stem}.{ext}", **kw))
    plt.close(fig)
    return paths


def primary_metric(metrics: Iterable[str]) -> str | None:
    ms = set(metrics)
    for m in PRIMARY_BY_PRIORITY:
        if m in ms:
            return m
    return None



FAMILY_ORDER = ("vision", "nlp", "tabular", "other")
FAMILY_TITLE = {"vision": "Vision", "nlp": "NLP", "tabular": "Tabular", "other": "Other"}


def direction(metric: str) -> str:
    """Words, not an arrow: a y label is drawn rotated, which would turn "↑" into "←"."""
    return "(higher is better)" if stats.higher_is_better(metric) else "(lower is better)"


def limits(values: Iterable[float], metric: str, pad_frac: float = 0.08) -> tuple[float, float]:
    """Axis limits around ``values`` padded a little, never outside the metric's valid range."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    vmin, vmax = stats.metric_range(metric)
    if v.size == 0:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = float(v.min()), float(v.max())
    span = hi - lo
    pad = pad_frac * span if span > 0 else max(abs(hi) * 0.02, 0.01)
    # never zoom below ~0.5% of the values: a 1e-6 difference must not fill the panel
    floor = 0.0025 * max(abs(lo), abs(hi))
    if span + 2 * pad < 2 * floor:
        pad = floor - span / 2
    return max(lo - pad, vmin), min(hi + pad, vmax)


def plain_ticks(ax) -> None:
    """No '1e-6+1.3111' offset labels: tick labels show the values themselves."""
    for axis in (ax.xaxis, ax.yaxis):
        fmt = axis.get_major_formatter()
        if hasattr(fmt, "set_useOffset"):
            fmt.set_useOffset(False)


def identical(a: pd.Series, b: pd.Series) -> bool:
    """Two per-epoch series with the same index and values (the same runs drawn twice)."""
    if len(a) == 0 or len(a) != len(b) or not a.index.equals(b.index):
        return False
    return bool(np.allclose(a.to_numpy(float), b.to_numpy(float), rtol=0, atol=1e-9,
                            equal_nan=True))


def legend_below(fig: plt.Figure, handles: list, labels: list, ncol: int | None = None) -> None:
    """One legend for the whole figure, below every panel, so it never covers data."""
    if not handles:
        return
    ncol = ncol or min(len(handles), 4)
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
               fontsize=8, frameon=False)


def family_panels(panels: list[tuple], ncols_max: int = 4, w: float = 3.6, h: float = 3.3):
    """Axes grouped by family: each family starts a new row, labelled on the left."""
    by_fam: dict[str, list] = {}
    for p in panels:
        by_fam.setdefault(p[0], []).append(p)
    fams = [f for f in FAMILY_ORDER if f in by_fam] + [f for f in by_fam if f not in FAMILY_ORDER]
    ncols = max(1, min(ncols_max, max(len(v) for v in by_fam.values())))
    rows = []
    for f in fams:
        items = by_fam[f]
        for i in range(0, len(items), ncols):
            rows.append((f, items[i:i + ncols], i == 0))
    fig, axes = plt.subplots(len(rows), ncols, figsize=(w * ncols + 0.6, h * len(rows)),
                             squeeze=False)
    placed = []
    for r, (f, items, first) in enumerate(rows):
        for c in range(ncols):
            ax = axes[r][c]
            if c < len(items):
                placed.append((ax, items[c]))
            else:
                ax.set_visible(False)
        if first:
            axes[r][0].annotate(FAMILY_TITLE.get(f, f), xy=(0, 0.5), xycoords="axes fraction",
                                xytext=(-62, 0), textcoords="offset points", rotation=90,
                                ha="center", va="center", fontsize=11, weight="bold")
    return fig, placed
