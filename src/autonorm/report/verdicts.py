"""The ledger's verdict rules (docs/method.md "How a claim is judged"), each a small function on
a study's tables, so that the page and its tests apply one rule:

* **regime**: a study's runs on a dataset may reproduce or contradict an accuracy or gate claim
  only when its LayerNorm reference (frozen_ln) reached the paper's: within 2 points of the
  paper's FrozenLN accuracy (10% for an RMSE), and above the dataset's trivial baseline by at least
  half the paper's own margin over it. Layer-wise gate claims also need the paper's depth.
  Out of regime a row is "inconclusive: out of the paper's regime", with both numbers. Applied
  alike to "reproduced" and "contradicted".
* **the claim as stated**: where the paper says "within the 95% CI", "competitive" or "not
  statistically significant", the claim is an equivalence, tested by two one-sided t-tests (TOST)
  with a margin; where it says significant, a difference.
* **our choice**: a verdict that flips within the range of a setting the paper leaves open reads
  "depends on our choice", with the range in which the paper's claim holds.
"""
from __future__ import annotations

import math

import pandas as pd
from scipy import stats as sps

from autonorm.analysis import stats
from autonorm.report.fmt import fmt, fnum

#: accuracy points of frozen_ln from the paper's FrozenLN within which a study is in regime
REGIME_ACCURACY_POINTS = 2.0
#: relative RMSE gap within which a study is in regime (an RMSE that means what it says)
REGIME_RMSE_RELATIVE = 0.10
#: share of the paper's margin over the trivial baseline a study's frozen_ln must reach
REGIME_MARGIN_SHARE = 0.5
#: the paper's backbone depth, per family: layer-wise gate claims are about these
PAPER_DEPTH = {"vision": 8, "nlp": 12, "tabular": 12}
#: the paper's backbone width (every family)
PAPER_WIDTH = 128

#: equivalence margins: the paper calls a vision result "competitive" at up to a point's deficit
#: (SVHN 89.38 vs 90.37, Fashion-MNIST 92.95 vs 93.12), so +-1 accuracy point; for an RMSE it
#: calls a 0.0013 (0.3%) lead "not statistically significant", so +-2% of its FrozenLN RMSE
EQUIVALENCE_ACCURACY_POINTS = 1.0
EQUIVALENCE_RMSE_RELATIVE = 0.02

#: the paper's words for each comparison it makes a claim of equivalence about (dataset, other
#: method) -> quote; every other main-table comparison is read as a signed difference
EQUIVALENCE_CLAIMS = {
    ("mnist", "frozen_ln"): "\"AutoNorm-S leads by 0.36% (99.18% vs. 98.82%) within the 95% CI\"",
    ("mnist", "adanorm"): "\"remaining competitive on vision benchmarks\" (abstract)",
    ("fashion_mnist", "frozen_ln"): "\"FrozenLN remains very competitive ... outperforms AutoNorm-S by 0.17%\"",
    ("fashion_mnist", "adanorm"): "\"remaining competitive on vision benchmarks\" (abstract)",
    ("california_housing", "frozen_ln"): "\"AutoNorm-S led by only 0.0013 RMSE (not statistically significant)\"",
}
#: the paper's words where it states a significance level
DIFFERENCE_CLAIMS = {
    ("ptb_pos", "frozen_ln"): "\"97.42% accuracy (vs. 96.80% for FrozenLN, p < 0.01)\"",
    ("cifar10c", "frozen_ln"): "\"statistically significant improvements (p < 0.05) on CIFAR-10-C\"",
}


def _summary_mean(summary: pd.DataFrame, d: str, method: str, metric: str) -> float:
    r = summary[(summary.dataset == d) & (summary.method == method) & (summary.metric == metric)]
    return fnum(r["mean"].iloc[0]) if len(r) else math.nan


def trivial_value(summary: pd.DataFrame, d: str, metric: str) -> float:
    r = summary[(summary.dataset == d) & (summary.metric == metric)]
    if "baseline_value" not in r or not r["baseline_value"].notna().any():
        return math.nan
    return fnum(r["baseline_value"].dropna().iloc[0])


def regime(summary: pd.DataFrame, reference: pd.DataFrame, d: str, metric: str | None = None
           ) -> tuple[bool | None, str]:
    """(in the paper's regime?, the numbers that decide it) for a study's dataset ``d``, judged on
    frozen_ln's primary metric (accuracy or RMSE). None when it cannot be judged (no frozen_ln run,
    or no paper FrozenLN number)."""
    src = "cifar10" if d == "cifar10c" else d
    ref = reference[(reference.dataset == src) & (reference.method == "frozen_ln")]
    for m in ([metric] if metric else []) + ["accuracy", "rmse"]:
        if m in set(ref.metric) and math.isfinite(_summary_mean(summary, src, "frozen_ln", m)):
            metric = m
            break
    else:
        return None, "no frozen_ln run, or no paper FrozenLN number, to judge the regime by"
    ours = _summary_mean(summary, src, "frozen_ln", metric)
    paper = float(ref[ref.metric == metric]["mean"].iloc[0])
    trivial = trivial_value(summary, src, metric)
    higher = stats.higher_is_better(metric)
    if higher:
        close = ours >= paper - REGIME_ACCURACY_POINTS
        gap = f"frozen_ln {fmt(ours)} vs the paper's {fmt(paper)} (within {REGIME_ACCURACY_POINTS:g} points: "
    else:
        close = ours <= paper * (1 + REGIME_RMSE_RELATIVE)
        gap = f"frozen_ln {fmt(ours)} vs the paper's {fmt(paper)} (within {100 * REGIME_RMSE_RELATIVE:g}%: "
    gap += "yes)" if close else "no)"
    if math.isfinite(trivial):
        margin_paper = (paper - trivial) if higher else (trivial - paper)
        margin_ours = (ours - trivial) if higher else (trivial - ours)
        above = margin_ours >= REGIME_MARGIN_SHARE * margin_paper
        gap += (f"; trivial baseline {fmt(trivial)}: ours {margin_ours:+.3g} beyond it, the paper's "
                f"{margin_paper:+.3g} (at least half: {'yes' if above else 'no'})")
    else:
        above = True
    return bool(close and above), gap


def out_of_regime(verdict: str, in_regime: bool | None, why: str) -> str:
    """A verdict as the regime rule allows it: reproduced or contradicted only in regime; an
    inconclusive row out of regime says so too (else it reads as a null result in the paper's
    regime)."""
    if in_regime is False and verdict.startswith(("reproduced", "contradicted", "significant", "inconclusive")) \
            and not verdict.startswith("inconclusive: out of the paper's regime"):
        return f"inconclusive: out of the paper's regime ({why}); the runs say: {verdict}"
    return verdict


def depth_ok(model_depth, family: str | None) -> bool:
    want = PAPER_DEPTH.get(str(family))
    return want is None or (model_depth is not None and int(model_depth) == want)


def equivalence_margin(metric: str, paper_reference_value: float) -> float:
    if stats.higher_is_better(metric):
        return EQUIVALENCE_ACCURACY_POINTS
    return EQUIVALENCE_RMSE_RELATIVE * abs(paper_reference_value)


def tost(n: int, mean_diff: float, sd_diff: float, margin: float, alpha: float = 0.05) -> dict:
    """Two one-sided paired t-tests of |true difference| < margin: p is the larger of the two
    one-sided p-values; equivalence at ``alpha`` exactly when the (1 - 2 alpha) CI lies inside
    (-margin, +margin)."""
    if n < 2 or not (math.isfinite(mean_diff) and math.isfinite(sd_diff)) or margin <= 0:
        return {"p": math.nan, "ci90": (math.nan, math.nan)}
    se = sd_diff / math.sqrt(n)
    df = n - 1
    if se == 0:
        p = 0.0 if abs(mean_diff) < margin else 1.0
        return {"p": p, "ci90": (mean_diff, mean_diff)}
    p_low = float(sps.t.sf((mean_diff + margin) / se, df))   # H0: diff <= -margin
    p_high = float(sps.t.cdf((mean_diff - margin) / se, df))  # H0: diff >= +margin
    half = float(sps.t.ppf(1 - alpha, df)) * se
    return {"p": max(p_low, p_high), "ci90": (mean_diff - half, mean_diff + half)}


def equivalence_verdict(c: pd.Series | dict, margin: float, paper_diff: float) -> tuple[str, str]:
    """(our difference with its unadjusted 95% CI, verdict) of an equivalence claim."""
    n = int(fnum(c.get("n")) or 0)
    diff, sd = fnum(c.get("mean_diff")), fnum(c.get("sd_diff"))
    if n < stats.MIN_N_POWER or not math.isfinite(diff):
        return (f"{fmt(diff)} (n={n})" if math.isfinite(diff) else "–",
                f"inconclusive: {n} paired seed(s), no test has power")
    lo, hi = stats.t_ci(diff, sd, n) if math.isfinite(sd) else (math.nan, math.nan)
    ours = f"{diff:+.3g} [{lo:+.3g}, {hi:+.3g}] (95% CI, unadjusted)"
    t = tost(n, diff, sd, margin)
    inside = (f"the paper's {paper_diff:+.3g} is {'inside' if lo <= paper_diff <= hi else 'outside'} "
              "our 95% CI" if math.isfinite(paper_diff) and math.isfinite(lo) else "")
    if math.isfinite(t["p"]) and t["p"] < 0.05:
        return ours, (f"reproduced: equivalent within ±{margin:.3g} (TOST p = {t['p']:.2g}; "
                      f"90% CI [{t['ci90'][0]:+.3g}, {t['ci90'][1]:+.3g}]); {inside}")
    if math.isfinite(lo) and (lo > margin or hi < -margin):
        return ours, (f"contradicted: the difference exceeds the ±{margin:.3g} margin of "
                      f"\"competitive\" (95% CI outside it); {inside}")
    return ours, (f"inconclusive: neither equivalence within ±{margin:.3g} (TOST p = {t['p']:.2g}) "
                  f"nor a difference beyond it is shown; {inside}")


def selector_width_for_share(base_params: float, selectors: int, dim: int, share: float = 0.01) -> int:
    """The largest selector hidden width h for which ``selectors`` two-layer selectors
    Linear(dim, h) - GELU - Linear(h, 2) add less than ``share`` of ``base_params``: each has
    (dim + 1) h + 2 h + 2 parameters."""
    if selectors <= 0 or base_params <= 0:
        return 0
    return max(0, math.floor((share * base_params / selectors - 2) / (dim + 3) - 1e-12))
