"""The ledger's verdict rules (docs/method.md section 11), each a small function on a study's
tables, so that every row of the page and its tests apply one rule:

* **regime**: a study's runs on a dataset may reproduce or contradict a claim only when its
  LayerNorm reference (frozen_ln) reached the paper's: within 2 points of the paper's FrozenLN
  accuracy (10% for an RMSE), and above the dataset's trivial baseline by at least half the
  paper's own margin over it. Layer-wise gate claims also need the paper's depth. Out of regime a
  row reads "inconclusive: out of the paper's regime", whichever way the runs point.
* **the claim as stated, every part of it**: a stated lead ("leads by", "outperforms", a bolded
  best) is a signed difference, tested by the paired t-test with Holm's correction; "within the
  95% CI", "competitive", "comparable" or "not statistically significant" is an equivalence,
  tested by two one-sided t-tests (TOST) with the margin. "Reproduced" needs every part to hold;
  a significant difference against a stated lead, or a difference beyond the margin against a
  stated equivalence, is "contradicted", whatever the other part says.
* **one margin, both ways**: the smallest difference the paper itself calls an improvement
  (:data:`MARGIN_SHARE`). It decides equivalence where that helps the paper, and it decides a
  directional claim of a meaningful difference where the data exclude one of that size (learned
  gates against random ones). A verdict that changes between half and twice the margin reads
  "depends on our choice (margin)", and every row prints the margins over which it holds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

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

#: The margin: the smallest difference the paper calls an improvement is 0.4 points of accuracy
#: (section 3.6: distillation "contributed a marginal 0.4%--0.8% improvement"), and everything it
#: calls "within the 95% CI" or "highly competitive" is below it (0.36 and 0.17 points; California's
#: 0.0013 RMSE, 0.27% of it, "not statistically significant"). For any accuracy or RMSE the margin
#: is that share, 0.4%, of the paper's FrozenLN value on the dataset (MNIST 0.395 points,
#: California 0.00196 RMSE).
MARGIN_SHARE = 0.004
#: the metrics the margin is defined for (their paper FrozenLN value sets its size)
MARGIN_METRICS = ("accuracy", "precision_macro", "recall_macro", "f1_macro", "rmse", "mae")
#: a verdict is robust to the margin when it is the same from half to twice it
MARGIN_RANGE = (0.5, 2.0)

#: the verdict words and what each means (shown under the ledger; the tally counts by them)
VERDICTS = {
    "reproduced": "every part of the claim holds: a stated difference has the paper's sign at "
                  "Holm-adjusted p < 0.05, a stated equivalence holds within the margin (TOST), a "
                  "threshold is met; in the paper's regime only",
    "contradicted": "a part of the claim fails in the paper's regime: a significant difference of the "
                    "opposite sign (Holm), a difference beyond the margin against a stated "
                    "equivalence, a difference of the size the paper calls an improvement excluded "
                    "in its direction (one-sided 95%), or a threshold not met",
    "inconclusive": "neither: no test decides at this power (the difference the test would detect "
                    "with 80% power is given), or the study is out of the paper's regime",
    "depends on our choice": "the verdict changes within the range of a setting the paper leaves open "
                             "(the margin, from half to twice it; the selectors' placement); both "
                             "readings are given",
    "cannot be what it says": "arithmetic on the paper's own numbers (or on the dataset) rules out "
                              "what the paper says the number or statement is, whatever we trained",
    "ill-defined": "the paper's quantity is not defined well enough to compare with ours; a reading "
                   "that fits is given",
    "not met on this CPU": "a cost claim that every seed exceeds by a consistent margin on our CPU; "
                           "the paper's device is not stated",
    "not testable here": "no study here ran it; the command that would is given",
    "not testable at this resolution": "the metric's grid (whole epochs) cannot tell the arms apart",
    "observation": "a check of our own choices or of what our runs did, not a claim of the paper "
                   "(counted apart)",
}
#: the categories of the tally, in the order the page lists them
CATEGORIES = tuple(VERDICTS)


def category(verdict: str) -> str:
    """The verdict word a verdict string starts with (the tally's category)."""
    v = verdict.lstrip("*")
    for word in sorted(CATEGORIES, key=len, reverse=True):
        if v.startswith(word):
            return word
    return "inconclusive"


# --------------------------------------------------------------------------- regime
def summary_mean(summary: pd.DataFrame, d: str, method: str, metric: str) -> float:
    r = summary[(summary.dataset == d) & (summary.method == method) & (summary.metric == metric)]
    return fnum(r["mean"].iloc[0]) if len(r) else math.nan


def trivial_value(summary: pd.DataFrame, d: str, metric: str) -> float:
    r = summary[(summary.dataset == d) & (summary.metric == metric)]
    if "baseline_value" not in r or not r["baseline_value"].notna().any():
        return math.nan
    return fnum(r["baseline_value"].dropna().iloc[0])


def paper_value(reference: pd.DataFrame, d: str, method: str, metric: str) -> float:
    src = "cifar10" if d == "cifar10c" else d
    r = reference[(reference.dataset == src) & (reference.method == method) & (reference.metric == metric)]
    return float(r["mean"].iloc[0]) if len(r) else math.nan


def regime(summary: pd.DataFrame, reference: pd.DataFrame, d: str, metric: str | None = None
           ) -> tuple[bool | None, str]:
    """(in the paper's regime?, the numbers that decide it) for a study's dataset ``d``, judged on
    frozen_ln's primary metric (accuracy or RMSE). None when it cannot be judged (no frozen_ln run,
    or no paper FrozenLN number)."""
    src = "cifar10" if d == "cifar10c" else d
    ref = reference[(reference.dataset == src) & (reference.method == "frozen_ln")]
    for m in ([metric] if metric else []) + ["accuracy", "rmse"]:
        if m in set(ref.metric) and math.isfinite(summary_mean(summary, src, "frozen_ln", m)):
            metric = m
            break
    else:
        return None, "no frozen_ln run, or no paper FrozenLN number, to judge the regime by"
    ours = summary_mean(summary, src, "frozen_ln", metric)
    paper = float(ref[ref.metric == metric]["mean"].iloc[0])
    trivial = trivial_value(summary, src, metric)
    higher = stats.higher_is_better(metric)
    close, gap = _within_band(ours, paper, higher, "frozen_ln")
    if math.isfinite(trivial):
        margin_paper = (paper - trivial) if higher else (trivial - paper)
        margin_ours = (ours - trivial) if higher else (trivial - ours)
        above = margin_ours >= REGIME_MARGIN_SHARE * margin_paper
        gap += (f"; trivial baseline {fmt(trivial)}: ours {margin_ours:+.3g} beyond it, the paper's "
                f"{margin_paper:+.3g} (at least half: {'yes' if above else 'no'})")
    else:
        above = True
    return bool(close and above), gap


def _within_band(ours: float, paper: float, higher: bool, who: str) -> tuple[bool, str]:
    if higher:
        close = ours >= paper - REGIME_ACCURACY_POINTS
        band = f"within {REGIME_ACCURACY_POINTS:g} points"
    else:
        close = ours <= paper * (1 + REGIME_RMSE_RELATIVE)
        band = f"within {100 * REGIME_RMSE_RELATIVE:g}%"
    return close, f"{who} {fmt(ours)} vs the paper's {fmt(paper)} ({band}: {'yes' if close else 'no'})"


def reference_method_band(summary: pd.DataFrame, reference: pd.DataFrame, d: str, metric: str,
                          method: str = "autonorm_s") -> str:
    """Where our ``method`` (AutoNorm-S) is outside the band that frozen_ln must meet for the
    regime, the sentence that says so (empty where it is inside, or unknown)."""
    if metric not in ("accuracy", "rmse"):
        return ""
    ours, paper = summary_mean(summary, d, method, metric), paper_value(reference, d, method, metric)
    if not (math.isfinite(ours) and math.isfinite(paper)):
        return ""
    close, gap = _within_band(ours, paper, stats.higher_is_better(metric), f"our {method}")
    return "" if close else f"{gap}: outside the band frozen_ln meets"


def baseline_band(summary: pd.DataFrame, reference: pd.DataFrame, d: str, metric: str,
                  method: str) -> tuple[bool | None, str]:
    """Whether our run of a baseline (AdaNorm, the Teacher MLP, ...) is within the band frozen_ln must
    meet of the paper's number for it, and the sentence that says so; (None, "") where unknown."""
    if metric not in ("accuracy", "rmse"):
        return None, ""
    ours, paper = summary_mean(summary, d, method, metric), paper_value(reference, d, method, metric)
    if not (math.isfinite(ours) and math.isfinite(paper)):
        return None, ""
    return _within_band(ours, paper, stats.higher_is_better(metric), f"our {method}")


def weakened_baseline(verdict: str, within: bool | None, gap: str) -> str:
    """A comparison with a baseline that is far below the paper's own number for it (outside the band
    frozen_ln must meet) says how our recipe treats that baseline, not what the paper compared: a
    verdict either way becomes inconclusive, with what the runs say."""
    if within is not False or category(verdict) not in ("reproduced", "contradicted", "depends on our choice"):
        return verdict
    return (f"inconclusive: the baseline is outside the band frozen_ln meets ({gap}), so a difference from it "
            f"is not the paper's; the runs say: {verdict}")


def study_regime(st, reference: pd.DataFrame, d: str, method: str = "autonorm_s") -> tuple[bool | None, str]:
    """The regime of a study (report.findings.studies.Study) on dataset ``d``: :func:`regime` of its
    frozen_ln, and the paper's backbone for the family (its depth, width 128): the paper's claims
    are about its models, and a smaller model near the paper's accuracy is not one of them."""
    ok, why = regime(st.ctx.summary, reference, d)
    model = (st.run_config(d, method) or st.run_config(d, "frozen_ln")).get("model") or {}
    fam = st.ctx.ds_family.get(d)
    depth, dim = model.get("depth"), int(model.get("dim") or 0)
    if model and not (depth_ok(depth, fam) and (dim == PAPER_WIDTH or fam is None)):
        return False, (f"{depth} x {dim}, not the paper's {PAPER_DEPTH.get(fam)} x {PAPER_WIDTH} backbone; " + why)
    return ok, why


def out_of_regime(verdict: str, in_regime: bool | None, why: str) -> str:
    """A verdict as the regime rule allows it: reproduced or contradicted only in regime; an
    inconclusive row out of regime says so too (else it reads as a null result in the paper's
    regime)."""
    judged = category(verdict) in ("reproduced", "contradicted", "inconclusive", "depends on our choice")
    if in_regime is False and judged and not verdict.startswith("inconclusive: out of the paper's regime"):
        return f"inconclusive: out of the paper's regime ({why}); the runs say: {verdict}"
    if in_regime is None and judged and not verdict.startswith("inconclusive: the regime cannot be judged"):
        return f"inconclusive: the regime cannot be judged ({why}); the runs say: {verdict}"
    return verdict


def depth_ok(model_depth, family: str | None) -> bool:
    want = PAPER_DEPTH.get(str(family))
    return want is None or (model_depth is not None and int(model_depth) == want)


# --------------------------------------------------------------------------- the margin
def margin(metric: str, paper_frozen_ln: float) -> float:
    """The equivalence and exclusion margin of ``metric`` (:data:`MARGIN_SHARE` of the paper's
    FrozenLN value), NaN where the margin is not defined for the metric or there is no value."""
    if metric not in MARGIN_METRICS or not math.isfinite(paper_frozen_ln):
        return math.nan
    return MARGIN_SHARE * abs(paper_frozen_ln)


# --------------------------------------------------------------------------- a paired difference
@dataclass(frozen=True)
class Paired:
    """A paired difference (reference minus other, the metric's own units) over n seeds."""
    n: int
    diff: float
    sd: float
    p_holm: float = math.nan
    mdd_holm: float = math.nan

    @classmethod
    def of(cls, c) -> "Paired":
        """From a comparisons row (or a dict with n, mean_diff, sd_diff, p_holm / p, mdd80_holm / mdd80)."""
        get = c.get if hasattr(c, "get") else (lambda k, d=None: getattr(c, k, d))
        p = fnum(get("p_holm"))
        mdd = fnum(get("mdd80_holm"))
        return cls(int(fnum(get("n")) or 0), fnum(get("mean_diff")), fnum(get("sd_diff")),
                   p if math.isfinite(p) else fnum(get("p")), mdd if math.isfinite(mdd) else fnum(get("mdd80")))

    @property
    def testable(self) -> bool:
        return self.n >= stats.MIN_N_POWER and math.isfinite(self.diff) and math.isfinite(self.sd)

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        return stats.t_ci(self.diff, self.sd, self.n, level)

    def text(self) -> str:
        if not self.testable:
            return f"{self.diff:+.3g} (n={self.n}: too few seeds for a test)" if math.isfinite(self.diff) else "–"
        lo, hi = self.ci()
        return f"{self.diff:+.3g} [{lo:+.3g}, {hi:+.3g}] (95% CI, unadjusted; n={self.n})"


@dataclass(frozen=True)
class Claim:
    """What a row tests: ``direction`` the paper's sign of reference minus other (+1 / -1; 0: no
    stated direction), ``equivalence`` whether it also says "within the CI", "competitive",
    "comparable" or "not significant", ``size`` the stated difference's size (math.inf for a
    meaningful one of no stated size, "outperform"): where it is at least the margin, the paper
    calls it an improvement, and excluding a difference of the margin in its direction contradicts it.
    ``sides`` names the reference and the other arm, ``parts`` the two parts, for the wording;
    ``higher_is_better`` whether a larger value is the better one (False for an RMSE, a perplexity,
    an epoch count) and ``better`` the word for the better side ("faster" for an epoch count)."""
    direction: int = 0
    equivalence: bool = False
    size: float = 0.0
    sides: tuple[str, str] = ("AutoNorm-S", "the other")
    parts: tuple[str, str] = ("the lead", "the equivalence")
    higher_is_better: bool = True
    better: str = "better"


def exclusion(p: Paired, claim: Claim) -> str:
    """What the one-sided 95% bound excludes in the direction the paper claims, in words."""
    s = claim.direction
    lo, hi = p.ci(0.90)
    bound = hi if s > 0 else lo   # the one-sided 95% bound on the side of the paper's direction
    if not math.isfinite(bound):
        return ""
    # the side the paper says is the better one: a positive difference favours the reference only
    # where larger values are better
    paper_prefers_reference = (s > 0) == claim.higher_is_better
    favoured, other = claim.sides if paper_prefers_reference else claim.sides[::-1]
    word = claim.better
    if s * bound <= 0:
        return (f"{favoured} {word} at all is excluded (one-sided 95%: {other} at least "
                f"{abs(bound):.2g} {word})")
    return f"{favoured} {word} by more than {abs(bound):.2g} is excluded (one-sided 95%)"


def _direction_part(p: Paired, claim: Claim, m: float) -> tuple[str, str]:
    s, name = claim.direction, claim.parts[0]
    sig = math.isfinite(p.p_holm) and p.p_holm < 0.05
    p_s = f"p (Holm) = {p.p_holm:.2g}" if math.isfinite(p.p_holm) else "no test"
    if sig and np.sign(p.diff) == s:
        return "holds", f"{name} holds (the paper's sign, {p_s})"
    if sig:
        return "contradicted", f"{name} is reversed (the opposite sign, {p_s})"
    lo, hi = p.ci(0.90)
    bound = hi if s > 0 else lo
    # a lead stated beside an equivalence ("within the CI", "competitive") is one the paper itself
    # calls no meaningful difference: only a difference it calls an improvement can be excluded
    if not claim.equivalence and math.isfinite(m) and claim.size >= m and math.isfinite(bound) and s * bound < m:
        return "contradicted", f"{name} of ±{m:.3g} or more is excluded (not significant either way, {p_s})"
    mdd = f"; detectable Δ {p.mdd_holm:.3g}" if math.isfinite(p.mdd_holm) else ""
    return "not shown", f"{name} is not shown ({p_s}{mdd})"


def _equivalence_part(p: Paired, claim: Claim, m: float) -> tuple[str, str]:
    name = claim.parts[1]
    if not math.isfinite(m):
        return "not shown", f"{name}: no margin for this metric"
    t = stats.tost(p.n, p.diff, p.sd, m)
    lo, hi = p.ci()
    tost_s = f"TOST p = {t['p']:.2g}, 90% CI [{t['ci90'][0]:+.3g}, {t['ci90'][1]:+.3g}]"
    if math.isfinite(t["p"]) and t["p"] < 0.05:
        return "holds", f"{name} holds within ±{m:.3g} ({tost_s})"
    if math.isfinite(lo) and (lo > m or hi < -m):
        return "contradicted", f"{name} fails: a difference beyond ±{m:.3g} (the 95% CI lies outside it; {tost_s})"
    return "not shown", f"{name} is not shown within ±{m:.3g} ({tost_s})"


def judge_at(p: Paired, claim: Claim, m: float) -> tuple[str, str, list[str]]:
    """(verdict word, the deciding part's name, one sentence per part) of ``claim`` at margin ``m``."""
    parts = []
    if claim.direction:
        parts.append((claim.parts[0],) + _direction_part(p, claim, m))
    if claim.equivalence:
        parts.append((claim.parts[1],) + _equivalence_part(p, claim, m))
    states = [s for _, s, _ in parts]
    if "contradicted" in states:
        return "contradicted", parts[states.index("contradicted")][0], [t for _, _, t in parts]
    if states and all(s == "holds" for s in states):
        return "reproduced", "", [t for _, _, t in parts]
    return "inconclusive", "", [t for _, _, t in parts]


def margin_range(p: Paired, claim: Claim, m: float) -> tuple[float, float]:
    """The margins around ``m`` (from m/20 to 20 m) over which the verdict at ``m`` stays the same."""
    if not math.isfinite(m):
        return math.nan, math.nan
    grid = m * np.geomspace(1 / 20, 20, 241)
    here = judge_at(p, claim, m)[0]
    same = np.array([judge_at(p, claim, x)[0] == here for x in grid])
    i = int(np.argmin(np.abs(grid - m)))
    lo_i, hi_i = i, i
    while lo_i > 0 and same[lo_i - 1]:
        lo_i -= 1
    while hi_i < len(grid) - 1 and same[hi_i + 1]:
        hi_i += 1
    return (0.0 if lo_i == 0 else float(grid[lo_i]), math.inf if hi_i == len(grid) - 1 else float(grid[hi_i]))


def _range_text(lo: float, hi: float) -> str:
    if lo == 0 and math.isinf(hi):
        return "at every margin"
    if lo == 0:
        return f"at margins up to ±{hi:.3g}"
    if math.isinf(hi):
        return f"at margins of ±{lo:.3g} or more"
    return f"at margins from ±{lo:.3g} to ±{hi:.3g}"


def difference_text(p: Paired) -> str:
    """A two-sided paired difference with no claim behind it, in words."""
    if not p.testable:
        return f"{p.n} paired seed(s), no test has power"
    if math.isfinite(p.p_holm) and p.p_holm < 0.05:
        return f"significant (p (Holm) = {p.p_holm:.2g})"
    mdd = f"; detectable Δ {p.mdd_holm:.3g}" if math.isfinite(p.mdd_holm) else ""
    return f"not significant (p (Holm) = {p.p_holm:.2g}{mdd})"


def judge(p: Paired, claim: Claim, m: float) -> str:
    """The verdict of a paired comparison against the claim as stated: its word (with the part
    that decides it), every part's outcome, what the data exclude in the paper's direction, and
    where a margin applies the margins over which the verdict holds; "depends on our choice
    (margin)" where it changes between half and twice the margin."""
    if not p.testable:
        return f"inconclusive: {p.n} paired seed(s), no test has power"
    word, deciding, parts = judge_at(p, claim, m)
    head = f"{word} ({deciding})" if deciding else word
    body = "; ".join(parts)
    if claim.direction and (ex := exclusion(p, claim)):
        body += f"; {ex}"
    if math.isfinite(m) and (claim.equivalence or claim.size > 0):
        at = {k: judge_at(p, claim, k * m)[0] for k in MARGIN_RANGE}
        if any(v != word for v in at.values()):
            lo_m, hi_m = MARGIN_RANGE
            return (f"depends on our choice (margin): {at[lo_m]} at ±{lo_m * m:.3g}, {word} at ±{m:.3g}, "
                    f"{at[hi_m]} at ±{hi_m * m:.3g}; {body}")
        body += f"; the verdict holds {_range_text(*margin_range(p, claim, m))}"
    return f"{head}: {body}"
