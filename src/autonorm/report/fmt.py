"""Number and markdown formatting shared by every report section."""
from __future__ import annotations

import math
from typing import Iterable, Sequence

from autonorm.analysis import stats
from autonorm.data import registry




def fmt(v, digits: int | None = None) -> str:
    """Compact number formatting: ints with separators, small numbers with 4 sig. figs."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(v):
        return "–"
    if digits is not None:
        return f"{v:.{digits}f}"
    a = abs(v)
    if a >= 1e5:
        return f"{v:.3g}" if a >= 1e9 else f"{v:,.0f}"
    if a >= 10:
        return f"{v:.2f}"
    if a >= 1:
        return f"{v:.3f}"
    if a == 0:
        return "0"
    return f"{v:.4g}"


def decimals(v: float) -> int:
    """Decimals that show ~4 significant figures of ``v`` (2 for values >= 10)."""
    a = abs(v)
    if not math.isfinite(a):
        return 3
    if a >= 10:
        return 2
    if a >= 1:
        return 3
    if a == 0:
        return 4
    return max(0, 3 - int(math.floor(math.log10(a))))


def fnum(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


TIE = "(tie)"


def fmt_ms(mean, sd, n=None) -> str:
    """'mean ± std' with the std printed to the same decimals as the mean; with ``n`` >= 2 seeds
    whose std prints as zero, marked a tie (the seeds scored alike, which a reader would
    otherwise take for one model or a bug)."""
    mean, sd, n = fnum(mean), fnum(sd), fnum(n)
    if not math.isfinite(mean):
        return "–"
    if abs(mean) >= 1e5:
        return fmt(mean) + (f" ± {fmt(sd)}" if math.isfinite(sd) else "")
    dec = decimals(mean)
    out = f"{mean:.{dec}f}"
    if math.isfinite(sd):
        out += f" ± {sd:.{dec}f}"
        if n >= 2 and round(sd, dec) == 0:
            out += f" {TIE}"
    return out


def fmt_diff(v, like) -> str:
    """A signed difference printed to the decimals of the quantity it compares."""
    v = fnum(v)
    if not math.isfinite(v):
        return "–"
    dec = decimals(fnum(like))
    if round(v, dec) == 0:  # "+0.00" would read as a small gain: it is a tie at this precision
        return f"{0:.{dec}f} {TIE}"
    return f"{v:+.{dec}f}"


def human_count(v) -> str:
    """A count to three significant figures: 1.07M, 102k, 950."""
    v = fnum(v)
    if not math.isfinite(v):
        return "–"
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= size:
            return f"{v / size:.3g}{unit}"
    return f"{v:.0f}"


def fmt_cost(metric: str, v) -> str:
    v = fnum(v)
    if not math.isfinite(v):
        return "–"
    if metric in ("params", "flops_per_sample"):
        return f"{v:,.0f}" if abs(v) < 1e12 else f"{v:.3g}"
    return fmt(v)


def fmt_p(p) -> str:
    p = fnum(p)
    if not math.isfinite(p):
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def fmt_ci(lo, hi, like, metric: str) -> tuple[str, bool]:
    """'[lo, hi]' clipped to the metric's valid range; (text, clipped?)."""
    lo, hi = fnum(lo), fnum(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "–", False
    vmin, vmax = stats.metric_range(metric)
    dec = decimals(fnum(like))
    if hi < vmin or lo > vmax:
        # the whole interval is impossible for this metric: a bug upstream, never hide it
        return f"[{lo:.{dec}f}, {hi:.{dec}f}] (outside the valid range!)", False
    clipped = lo < vmin or hi > vmax
    lo, hi = max(lo, vmin), min(hi, vmax)
    return f"[{lo:.{dec}f}, {hi:.{dec}f}]" + ("*" if clipped else ""), clipped


def md_table(headers: Sequence[str], rows: Iterable[Sequence]) -> str:
    rows = [[str(c).replace("|", "\\|").replace("\n", " ") for c in r] for r in rows]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def pretty(d: str) -> str:
    """A dataset's name as reports show it (the dataset registry's ``display``)."""
    return registry.display_name(d)


def truthy(v) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    try:
        return bool(v) and not (isinstance(v, float) and math.isnan(v))
    except (TypeError, ValueError):
        return False


def text(v) -> str:
    """A csv cell as text ('' for NaN / None)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)
