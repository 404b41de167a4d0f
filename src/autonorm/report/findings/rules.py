"""The ledger's verdict rules (docs/method.md section 11), each a small function on a study's
tables, so that every row of the page and its tests apply one rule:

* **regime**: a study's runs on a dataset may reproduce or contradict a claim only when they train
  the setup the paper states (its backbone's depth and width, and on vision its 4 x 4 patch) and
  their LayerNorm reference (frozen_ln) reached the paper's: within 2 points of the paper's FrozenLN
  accuracy (10% for an RMSE), either side, and above the dataset's trivial baseline by at least half the paper's
  own margin over it. Out of regime a row reads "inconclusive: out of the paper's regime", with the
  element that differs and what the runs say.
* **both arms by one band, both ways**: an arm of a comparison (AutoNorm-S or a baseline) outside the
  band frozen_ln must meet of the paper's number for it, below it or above it, decides nothing where its
  deviation points the way the result went: the deviation, not the method, may be the difference.
* **the claim as stated, every part of it**: a stated lead ("leads by", "outperforms", a bolded
  best) is a signed difference, tested by the paired t-test with Holm's correction over the claim's
  family; the paper's stated number is a part of it: where the 90% interval excludes it, on either side
  (a larger effect than stated, or a smaller one), that part is contradicted. "Within the 95% CI",
  "competitive", "comparable" or "not statistically significant" is an equivalence, decided by the
  90% interval against the margin, both ways (TOST). "Reproduced" needs every part to hold; one
  contradicted part contradicts the claim.
* **one margin**: the smallest difference the paper itself calls an improvement
  (:data:`MARGIN_SHARE`). It is the equivalence margin, and the threshold of a meaningful difference
  the paper states without a number ("outperform"). A verdict whose equivalence part changes
  between half and twice the margin reads "depends on our choice (margin)"; the band never moves the
  threshold a stated number is held against. Every row prints the exact margins over which it holds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autonorm.analysis import stats
from autonorm.data import registry
from autonorm.report.context import column_where
from autonorm.report.fmt import fmt, fnum, pretty

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
#: the patch size the paper states for its vision backbone (§3.6: "a patch size of $4 \times 4$")
PAPER_PATCH = 4

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
                    "with 80% power is given), the study is out of the paper's regime, or it has fewer "
                    "seeds than it planned (interim)",
    "depends on our choice": "the verdict changes within the range of a setting the paper leaves open "
                             "(the margin, from half to twice it; the selectors' placement; the "
                             "selector's width, which the paper does not give); both readings, or the "
                             "range where it holds, are given",
    "cannot be what it says": "arithmetic on the paper's own numbers (or on the dataset) rules out "
                              "what the paper says the number or statement is, whatever we trained",
    "ill-defined": "the paper's quantity is not defined well enough to compare with ours; a reading "
                   "that fits is given",
    "not met on this CPU": "a cost claim that every seed exceeds by a consistent margin on our CPU; "
                           "the paper's device is not stated",
    "not testable here": "no study here ran it (the command that would is given), or our runs do not "
                         "measure what it names (the reason is given)",
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


#: how a row of a study short of the seeds it planned begins (:func:`decided_from_seeds`)
INTERIM = "inconclusive: interim"


def decided_from_seeds(verdict: str, n: int, planned: int = 0) -> str:
    """A verdict as the seed rule allows it: reproduced or contradicted only from at least
    ``stats.MIN_N_POWER`` seeds of each method the row reads, a difference (whose test has no power below
    that) and a level or a curve alike (a pilot's one run decides nothing); ``n`` 0 is a row that reads no
    seeds (the paper's own numbers, a benchmark's record, a model's parameter count). And where the
    study's plan fixed more seeds (``planned``, its study.json), only from all of them, a verdict that
    depends on our choice too (one of its readings is decided): a verdict read at every sitting while the
    seeds come in would be tested again and again, and could stop where it happened to cross. Else
    inconclusive, with what the runs say."""
    n = int(n)
    if category(verdict) not in ("reproduced", "contradicted", "depends on our choice") or n <= 0:
        return verdict
    if n < stats.MIN_N_POWER:
        return (f"inconclusive: n={n}; a verdict is decided from at least {stats.MIN_N_POWER} seeds of each "
                f"method it reads; the runs say: {verdict}")
    if n < planned:
        return (f"{INTERIM}, n={n} of the {planned} seeds the study planned; a study decides at its "
                f"planned seeds, not while they come in; the runs say: {verdict}")
    return verdict


# --------------------------------------------------------------------------- regime
def summary_mean(summary: pd.DataFrame, d: str, method: str, metric: str) -> float:
    v = column_where(summary, "mean", dataset=d, method=method, metric=metric)
    return fnum(v[0]) if len(v) else math.nan


def trivial_value(summary: pd.DataFrame, d: str, metric: str) -> float:
    if "baseline_value" not in summary:
        return math.nan
    v = column_where(summary, "baseline_value", dataset=d, metric=metric)
    v = v[pd.notna(v)]
    return fnum(v[0]) if len(v) else math.nan


def paper_value(reference: pd.DataFrame, d: str, method: str, metric: str) -> float:
    """The paper's number for ``method`` on dataset ``d`` in ``metric``: CIFAR-10-C's are its corruption
    metrics (its clean accuracy is CIFAR-10's: :func:`trained_on`)."""
    v = column_where(reference, "mean", dataset=d, method=method, metric=metric)
    return float(v[0]) if len(v) else math.nan


def trained_on(d: str) -> str:
    """The dataset whose runs a study evaluates on ``d``: a corruption set's clean source (CIFAR-10 for
    CIFAR-10-C, registry.CORRUPTION_SETS), else ``d`` itself."""
    return registry.CORRUPTION_SETS.get(d, {}).get("source", d)


def judged_on(summary: pd.DataFrame, reference: pd.DataFrame, d: str, method: str) -> tuple[str, str] | None:
    """(dataset, metric) on which our run of ``method`` on ``d`` is set beside the paper's number for it, by
    the regime (frozen_ln) and the band of every other arm alike: the dataset's primary metric (accuracy, or
    an RMSE) where both ours and the paper's exist, on clean CIFAR-10 for CIFAR-10-C (its corrupted test sets
    evaluate the clean run); None where either is missing."""
    src = trained_on(d)
    for m in ("accuracy", "rmse"):
        if math.isfinite(summary_mean(summary, src, method, m)) and math.isfinite(paper_value(reference, src, method, m)):
            return src, m
    return None


def regime(summary: pd.DataFrame, reference: pd.DataFrame, d: str) -> tuple[bool | None, str]:
    """(in the paper's regime?, the numbers that decide it) for a study's dataset ``d``, judged on
    frozen_ln's primary metric (:func:`judged_on`). None when it cannot be judged (no frozen_ln run,
    or no paper FrozenLN number)."""
    on = judged_on(summary, reference, d, "frozen_ln")
    if on is None:
        return None, "no frozen_ln run, or no paper FrozenLN number, to judge the regime by"
    src, metric = on
    ours = summary_mean(summary, src, "frozen_ln", metric)
    paper = paper_value(reference, src, "frozen_ln", metric)
    trivial = trivial_value(summary, src, metric)
    higher = stats.higher_is_better(metric)
    side, gap = _within_band(ours, paper, higher, "frozen_ln")
    close = side == 0
    if math.isfinite(trivial):
        margin_paper = (paper - trivial) if higher else (trivial - paper)
        margin_ours = (ours - trivial) if higher else (trivial - ours)
        above = margin_ours >= REGIME_MARGIN_SHARE * margin_paper
        gap += (f"; trivial baseline {fmt(trivial)}: ours {margin_ours:+.3g} beyond it, the paper's "
                f"{margin_paper:+.3g} (at least half: {'yes' if above else 'no'})")
    else:
        above = True
    return bool(close and above), gap


def _within_band(ours: float, paper: float, higher: bool, who: str) -> tuple[int, str]:
    """(where our value lies against the band around the paper's: 0 within it, -1 worse than the band,
    +1 better than it; the sentence that says so). The band is 2 points of an accuracy or 10% of an
    RMSE, on either side: a model far better than the paper's is as far from its regime as one far worse."""
    if higher:
        dev = ours - paper
        side = 0 if abs(dev) <= REGIME_ACCURACY_POINTS else int(math.copysign(1, dev))
        band = f"within {REGIME_ACCURACY_POINTS:g} points"
    else:
        dev = ours / paper - 1
        side = 0 if abs(dev) <= REGIME_RMSE_RELATIVE else -int(math.copysign(1, dev))
        band = f"within {100 * REGIME_RMSE_RELATIVE:g}%"
    word = "yes" if side == 0 else ("no, worse" if side < 0 else "no, better")
    return side, f"{who} {fmt(ours)} vs the paper's {fmt(paper)} ({band}: {word})"


def arm_band(summary: pd.DataFrame, reference: pd.DataFrame, d: str, metric: str,
             method: str) -> tuple[int | None, str]:
    """Where our run of ``method`` (AutoNorm-S, or a baseline: AdaNorm, the Teacher MLP, ...) lies against
    the band frozen_ln must meet of the paper's number for it (:func:`_within_band`: 0 within, -1 worse,
    +1 better), and the sentence that says so; (None, "") where unknown (no paper number, no run). It is
    judged on the dataset's primary metric (:func:`judged_on`) whatever the row's ``metric`` (an MAE, an
    F1, rotated accuracy, a CIFAR-10-C corruption): it asks whether our run of the method is like the
    paper's, as the regime asks of frozen_ln, and every row that reads the run reads the same answer."""
    on = judged_on(summary, reference, d, method)
    if on is not None:
        src, m = on
        what = "RMSE" if m == "rmse" else "accuracy"
        what = f"clean {pretty(src)} {what}" if src != d else what
        who = f"our {method}" if m == metric and src == d else f"our {method}'s {what}"
        return _within_band(summary_mean(summary, src, method, m), paper_value(reference, src, method, m),
                            stats.higher_is_better(m), who)
    return None, ""


def both_arms(verdict: str, bands: dict[str, tuple[int | None, str]], a: str, b: str,
              ahead: float) -> tuple[str, str]:
    """The band rule for both arms of a comparison alike, both ways: (the verdict, a note naming every
    arm outside its band). ``bands`` gives each arm's :func:`arm_band`; ``ahead`` is how far ``a`` came
    out ahead of ``b`` beyond what the paper's numbers say (our difference minus the paper's, in the
    better direction; the paper's taken as 0 where it gives none). An arm outside its band decides
    nothing where its deviation points the way the result went: ``a`` behind what the paper says is what
    a's shortfall or b's excess would make, ``a`` ahead what a's excess or b's shortfall would make; so
    a decided verdict becomes inconclusive, with what the runs say. Where the deviation points the other
    way it cannot explain the result, and the verdict stands."""
    outside = {m: (side, gap) for m, (side, gap) in bands.items() if side}
    if not outside:
        return verdict, ""
    note = "; ".join(f"{gap}: outside the band frozen_ln meets" for _, gap in outside.values())
    way = 0 if not math.isfinite(ahead) or ahead == 0 else (1 if ahead > 0 else -1)
    explains = [m for m, (side, _) in outside.items() if way and side == (way if m == a else -way)]
    if explains and category(verdict) in ("reproduced", "contradicted", "depends on our choice"):
        m = explains[0]
        side, gap = outside[m]
        went = f"{a} {'better' if way > 0 else 'worse'} against {b} than the paper's numbers say"
        return (f"inconclusive: {m} is outside the band frozen_ln meets ({gap}), and its "
                f"{'excess' if side > 0 else 'shortfall'} points the way the result went ({went}), so it may be "
                f"the difference; the runs say: {verdict}"), note
    return verdict, note


def ahead_of_paper(a_ours: float, b_ours: float, a_paper: float, b_paper: float, higher_is_better: bool) -> float:
    """How far arm a came out ahead of arm b beyond what the paper's numbers say (our a - b minus the
    paper's, in the better direction; the paper's difference taken as 0 where it gives no number)."""
    paper = a_paper - b_paper if math.isfinite(a_paper) and math.isfinite(b_paper) else 0.0
    gap = (a_ours - b_ours) - paper
    return gap if higher_is_better else -gap


def departures(model: dict, family: str | None) -> list[str]:
    """The elements of the setup the paper states in which a run's model differs from it: the
    backbone's depth and width, and on vision the patch size."""
    out = []
    depth, dim = model.get("depth"), int(model.get("dim") or 0)
    if not (depth_ok(depth, family) and (dim == PAPER_WIDTH or family is None)):
        out.append(f"{depth} x {dim}, not the paper's {PAPER_DEPTH.get(family)} x {PAPER_WIDTH} backbone")
    patch = model.get("patch_size")
    if family == "vision" and patch and int(patch) != PAPER_PATCH:
        out.append(f"patch {int(patch)} x {int(patch)}, not the paper's {PAPER_PATCH} x {PAPER_PATCH}")
    return out


def study_regime(st, reference: pd.DataFrame, d: str, method: str = "autonorm_s") -> tuple[bool | None, str]:
    """The regime of a study (report.findings.studies.Study) on dataset ``d``: :func:`regime` of its
    frozen_ln, and the setup the paper states (:func:`departures`): the paper's claims are about its
    models, and a model that differs from them near the paper's accuracy is not one of them."""
    ok, why = regime(st.ctx.summary, reference, d)
    model = (st.run_config(d, method) or st.run_config(d, "frozen_ln")).get("model") or {}
    differs = departures(model, st.ctx.ds_family.get(d)) if model else []
    if differs:
        return False, "; ".join(differs) + "; " + why
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
    """A paired difference (reference minus other, the metric's own units) over n seeds; ``family``
    the number of tests its Holm correction ran over (1: a raw p; 0: unknown)."""
    n: int
    diff: float
    sd: float
    p_holm: float = math.nan
    mdd_holm: float = math.nan
    family: int = 0

    @classmethod
    def of(cls, c) -> "Paired":
        """From a comparisons row (or a dict with n, mean_diff, sd_diff, p_holm / p, mdd80_holm /
        mdd80, holm_m)."""
        get = c.get if hasattr(c, "get") else (lambda k, d=None: getattr(c, k, d))
        p = fnum(get("p_holm"))
        mdd = fnum(get("mdd80_holm"))
        fam = fnum(get("holm_m"))
        return cls(int(fnum(get("n")) or 0), fnum(get("mean_diff")), fnum(get("sd_diff")),
                   p if math.isfinite(p) else fnum(get("p")), mdd if math.isfinite(mdd) else fnum(get("mdd80")),
                   int(fam) if math.isfinite(fam) else 0)

    @property
    def testable(self) -> bool:
        return self.n >= stats.MIN_N_POWER and math.isfinite(self.diff) and math.isfinite(self.sd)

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        return stats.t_ci(self.diff, self.sd, self.n, level)

    def p_text(self) -> str:
        """'p = 0.029 (one test)', 'p (Holm, 2 tests) = 0.058', 'no test'."""
        if not math.isfinite(self.p_holm):
            return "no test"
        if self.family == 1:
            return f"p = {self.p_holm:.2g} (one test)"
        return f"p (Holm, {self.family} tests) = {self.p_holm:.2g}" if self.family > 1 else f"p (Holm) = {self.p_holm:.2g}"

    def text(self) -> str:
        if not self.testable:
            return f"{self.diff:+.3g} (n={self.n}: too few seeds for a test)" if math.isfinite(self.diff) else "–"
        lo, hi = self.ci()
        return f"{self.diff:+.3g} [{lo:+.3g}, {hi:+.3g}] (95% CI, unadjusted; n={self.n})"


@dataclass(frozen=True)
class Claim:
    """What a row tests: ``direction`` the paper's sign of reference minus other (+1 / -1; 0: no
    stated direction), ``equivalence`` whether it also says "within the CI", "competitive",
    "comparable" or "not significant", ``size`` the stated difference's size: a number the paper
    states (the table's difference, "leads by 0.36"), held against the one-sided 95% bound as it is;
    math.inf for a meaningful difference of no stated size ("outperform"), held against the margin;
    0 for a direction alone. A stated number is a point (``size_hi`` NaN) or the range ``size`` to
    ``size_hi`` the paper gives ("+0.4 to +0.8"): the data exclude it on either side alike, a larger
    effect than stated as a smaller one. ``sides`` names the reference and the other arm, ``parts``
    the two parts, for the wording; ``higher_is_better`` whether a larger value is the better one
    (False for an RMSE, a perplexity, an epoch count) and ``better`` the word for the better side
    ("faster" for an epoch count)."""
    direction: int = 0
    equivalence: bool = False
    size: float = 0.0
    sides: tuple[str, str] = ("AutoNorm-S", "the other")
    parts: tuple[str, str] = ("the lead", "the equivalence")
    higher_is_better: bool = True
    better: str = "better"
    size_hi: float = math.nan

    @property
    def stated_top(self) -> float:
        """The largest size the paper states (its number, or the top of its range); NaN where it
        states none ("outperform", a direction alone): such a claim has no size to exceed."""
        if math.isinf(self.size) or not self.size > 0:
            return math.nan
        return self.size_hi if math.isfinite(self.size_hi) else self.size

    def stated_text(self) -> str:
        """The paper's signed number or range, in words: "+0.36", "+0.4 to +0.8"."""
        s = self.direction or 1
        if math.isfinite(self.size_hi) and self.size_hi != self.size:
            return f"{s * self.size:+.3g} to {s * self.size_hi:+.3g}"
        return f"{s * self.size:+.3g}"


def threshold(claim: Claim, m: float) -> float:
    """The size the paper's direction is held against: its stated number, the margin (math.inf: a
    meaningful difference of no stated size) where the margin is defined, else none (NaN)."""
    if math.isinf(claim.size):
        return m if math.isfinite(m) else math.nan
    return claim.size if claim.size > 0 else math.nan


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


def _direction_part(p: Paired, claim: Claim, limit: float) -> tuple[str, str]:
    """The stated direction and its size: reversed (significant, the other sign) or the stated number
    excluded, on either side (the one-sided 95% bound in the paper's direction below ``limit``, or
    the other end of the 90% interval beyond the largest stated size): contradicted; the paper's sign
    at Holm p < 0.05 with the stated number not excluded: holds."""
    s, name = claim.direction, claim.parts[0]
    sig = math.isfinite(p.p_holm) and p.p_holm < 0.05
    p_s = p.p_text()
    if sig and np.sign(p.diff) != s:
        return "contradicted", f"{name} is reversed (the opposite sign, {p_s})"
    lo, hi = p.ci(0.90)
    bound = hi if s > 0 else lo
    why = f"the paper's sign, {p_s}" if sig else f"not significant either way, {p_s}"
    if math.isfinite(limit) and math.isfinite(bound) and s * bound < limit:
        stated = (f"of the margin (±{limit:.3g}) or more" if math.isinf(claim.size)
                  else f"of the paper's {claim.stated_text()}")   # a finite size is its own limit (threshold)
        return "contradicted", f"{name} {stated} is excluded (one-sided 95% bound {bound:+.3g}; {why})"
    # the same number from above: an effect larger than stated excludes the number as surely
    top, near = claim.stated_top, (lo if s > 0 else hi)
    if math.isfinite(top) and math.isfinite(near) and s * near > top:
        return "contradicted", (f"{name} of the paper's {claim.stated_text()} is excluded: the difference is "
                                f"larger than stated (one-sided 95% bound {near:+.3g}; {why})")
    if sig:
        return "holds", f"{name} holds (the paper's sign, {p_s})"
    mdd = f"; detectable Δ {p.mdd_holm:.3g}" if math.isfinite(p.mdd_holm) else ""
    return "not shown", f"{name} is not shown ({p_s}{mdd})"


def equivalence_edges(p: Paired) -> tuple[float, float]:
    """(e_out, e_in) of the 90% interval [lo, hi]: a margin below e_out has the whole interval outside
    ±margin (a difference beyond it, at one-sided 95%); a margin above e_in has it inside (TOST at 5%);
    in between neither is shown. e_out is 0 where the interval holds 0."""
    lo, hi = p.ci(0.90)
    e_in = max(abs(lo), abs(hi))
    e_out = min(abs(lo), abs(hi)) if lo * hi > 0 else 0.0
    return e_out, e_in


def _equivalence_part(p: Paired, claim: Claim, m: float) -> tuple[str, str]:
    """A stated equivalence at margin ``m``, one interval both ways: the 90% interval inside ±m
    holds (TOST p < 0.05), wholly outside ±m contradicted, else not shown."""
    name = claim.parts[1]
    if not math.isfinite(m):
        return "not shown", f"{name}: no margin for this metric"
    t = stats.tost(p.n, p.diff, p.sd, m)
    lo, hi = t["ci90"]
    tost_s = f"TOST p = {t['p']:.2g}, 90% CI [{lo:+.3g}, {hi:+.3g}]"
    if -m < lo and hi < m:
        return "holds", f"{name} holds within ±{m:.3g} ({tost_s})"
    if lo > m or hi < -m:
        return "contradicted", f"{name} fails: a difference beyond ±{m:.3g} (the 90% CI lies outside it; {tost_s})"
    return "not shown", f"{name} is not shown within ±{m:.3g} ({tost_s})"


def judge_at(p: Paired, claim: Claim, m: float, limit: float | None = None) -> tuple[str, str, list[str]]:
    """(verdict word, the deciding part's name, one sentence per part) of ``claim`` with equivalence
    margin ``m``; ``limit`` is what the stated direction is held against (default: :func:`threshold`
    at ``m``)."""
    limit = threshold(claim, m) if limit is None else limit
    parts = []
    if claim.direction:
        parts.append((claim.parts[0],) + _direction_part(p, claim, limit))
    if claim.equivalence:
        parts.append((claim.parts[1],) + _equivalence_part(p, claim, m))
    states = [s for _, s, _ in parts]
    if "contradicted" in states:
        return "contradicted", parts[states.index("contradicted")][0], [t for _, _, t in parts]
    if states and all(s == "holds" for s in states):
        return "reproduced", "", [t for _, _, t in parts]
    return "inconclusive", "", [t for _, _, t in parts]


def margin_range(p: Paired, claim: Claim, m: float) -> tuple[float, float]:
    """The exact equivalence margins around ``m`` over which the verdict at ``m`` stays the same (the
    stated direction's threshold held fixed): the verdict changes only where the equivalence part
    does, at the edges of the 90% interval (:func:`equivalence_edges`)."""
    if not math.isfinite(m):
        return math.nan, math.nan
    if not claim.equivalence:
        return 0.0, math.inf
    limit = threshold(claim, m)
    e_out, e_in = equivalence_edges(p)
    # the three stretches of margin on which the equivalence part is constant, with the verdict on each
    bounds = [0.0, e_out, e_in, math.inf]
    words = [judge_at(p, claim, x, limit)[0] for x in (e_out / 2, (e_out + e_in) / 2, 2 * e_in + 1)]
    i = 0 if m < e_out else (1 if m <= e_in else 2)
    lo_i, hi_i = i, i
    while lo_i > 0 and words[lo_i - 1] == words[i]:
        lo_i -= 1
    while hi_i < 2 and words[hi_i + 1] == words[i]:
        hi_i += 1
    return bounds[lo_i], bounds[hi_i + 1]


def margin_text(x: float, m: float) -> str:
    """``x`` (a multiple of the margin ``m``) to the precision ``m`` is printed with (3 significant
    digits): 0.395 -> ±0.198 and ±0.791, 0.00196 -> ±0.00098 and ±0.00392."""
    decimals = max(0, 2 - int(math.floor(math.log10(abs(m))))) if m else 3
    return f"±{x:.{decimals}f}"


def _range_text(lo: float, hi: float, m: float) -> str:
    if lo == 0 and math.isinf(hi):
        return "at every margin"
    if lo == 0:
        return f"at margins below {margin_text(hi, m)}"
    if math.isinf(hi):
        return f"at margins above {margin_text(lo, m)}"
    return f"at margins from {margin_text(lo, m)} to {margin_text(hi, m)}"


def non_superiority(p: Paired, m: float, name: str, higher_is_better: bool) -> tuple[str, str]:
    """A claim that ``name`` is not better than the base by the margin ("tau = 0.5 is optimal": no other tau
    does better), from the 90% interval of ``name`` minus the base, both ways: its better end below the
    margin holds (one-sided 95%), its worse end beyond the margin on the better side contradicts, else not
    shown. (word, sentence)."""
    if not (p.testable and math.isfinite(m)):
        return "not shown", "no test" if p.testable else f"n={p.n}: no test"
    lo, hi = p.ci(0.90)
    best, least = (hi, lo) if higher_is_better else (-lo, -hi)  # how much better it may be / at least is
    if best < m:
        return "holds", f"{name} better by ±{m:.3g} or more is excluded (one-sided 95% bound {best:+.3g})"
    if least > m:
        return "contradicted", f"{name} better by more than ±{m:.3g} (one-sided 95%: at least {least:+.3g})"
    return "not shown", f"{name} better by ±{m:.3g} is not excluded (one-sided 95% bound {best:+.3g})"


def difference_text(p: Paired) -> str:
    """A two-sided paired difference with no claim behind it, in words."""
    if not p.testable:
        return f"{p.n} paired seed(s), no test has power"
    if math.isfinite(p.p_holm) and p.p_holm < 0.05:
        return f"significant ({p.p_text()})"
    mdd = f"; detectable Δ {p.mdd_holm:.3g}" if math.isfinite(p.mdd_holm) else ""
    return f"not significant ({p.p_text()}{mdd})"


def judge(p: Paired, claim: Claim, m: float) -> str:
    """The verdict of a paired comparison against the claim as stated: its word (with the part
    that decides it), every part's outcome, what the data exclude in the paper's direction, and,
    where the claim states an equivalence, the exact margins over which the verdict holds;
    "depends on our choice (margin)" where it changes between half and twice the margin. The
    threshold a stated number (or "outperform") is held against does not move with the margin."""
    if not p.testable:
        return f"inconclusive: {p.n} paired seed(s), no test has power"
    limit = threshold(claim, m)
    word, deciding, parts = judge_at(p, claim, m, limit)
    head = f"{word} ({deciding})" if deciding else word
    body = "; ".join(parts)
    if claim.direction and (ex := exclusion(p, claim)):
        body += f"; {ex}"
    if math.isfinite(m) and claim.equivalence:
        at = {k: judge_at(p, claim, k * m, limit)[0] for k in MARGIN_RANGE}
        if any(v != word for v in at.values()):
            lo_m, hi_m = MARGIN_RANGE
            return (f"depends on our choice (margin): {at[lo_m]} at {margin_text(lo_m * m, m)}, {word} at "
                    f"{margin_text(m, m)}, {at[hi_m]} at {margin_text(hi_m * m, m)}; {body}")
        body += f"; the verdict holds {_range_text(*margin_range(p, claim, m), m)}"
    return f"{head}: {body}"
