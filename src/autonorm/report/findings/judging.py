"""A paired difference judged against a claim as the paper states it (docs/method.md section 11): its parts (a
stated direction and number, held with the paper's spread; a stated equivalence), one level for every reading
(familywise 5% over the claim's family), the margin and the range of margins over which a verdict holds."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from autonorm.analysis import stats
from autonorm.report.fmt import fnum

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

    @property
    def level(self) -> float:
        """The level of the interval every reading of an interval uses (a stated number excluded, an
        equivalence, non-superiority): one level with the tests, familywise 5% over the claim's family of k
        tests, so the two-sided 1 - 0.10/k interval, whose ends are one-sided bounds at 0.05/k (Bonferroni,
        Holm's first step); 90% for a family of one (docs/method.md section 11, "One level")."""
        return 1 - 0.10 / max(self.family, 1)

    def bounds(self) -> tuple[float, float]:
        """The interval at :attr:`level`."""
        return self.ci(self.level)

    def level_text(self) -> str:
        """'90% CI' for a family of one, '96.7% CI (Bonferroni, 3 tests)' else."""
        pct = f"{100 * self.level:.3g}% CI"
        return pct if self.family <= 1 else f"{pct} (Bonferroni, {self.family} tests)"

    def bound_text(self) -> str:
        """'one-sided 95%' for a family of one, 'one-sided 98.3%, Bonferroni over 3 tests' else."""
        one = 100 * (1 - (1 - self.level) / 2)
        return f"one-sided {one:.3g}%" + (f", Bonferroni over {self.family} tests" if self.family > 1 else "")

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
    #: the standard error of the paper's stated number from its own spread (its ± SDs over 5 seeds), and its
    #: degrees of freedom; NaN where the paper gives no spread (its number is then held as exact)
    paper_se: float = math.nan
    paper_df: float = math.nan

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
    """What the one-sided bound (at the family's level, :attr:`Paired.level`) excludes in the direction the
    paper claims, in words."""
    s = claim.direction
    lo, hi = p.bounds()
    bound = hi if s > 0 else lo   # the one-sided 95% bound on the side of the paper's direction
    if not math.isfinite(bound):
        return ""
    # the side the paper says is the better one: a positive difference favours the reference only
    # where larger values are better
    paper_prefers_reference = (s > 0) == claim.higher_is_better
    favoured, other = claim.sides if paper_prefers_reference else claim.sides[::-1]
    word = claim.better
    if s * bound <= 0:
        return (f"{favoured} {word} at all is excluded ({p.bound_text()}: {other} at least "
                f"{abs(bound):.2g} {word})")
    return f"{favoured} {word} by more than {abs(bound):.2g} is excluded ({p.bound_text()})"


def _direction_part(p: Paired, claim: Claim, limit: float) -> tuple[str, str]:
    """The stated direction and its size: reversed (significant, the other sign) or the stated number
    excluded, on either side: contradicted; the paper's sign at Holm p < 0.05 with the stated number not
    excluded: holds. A stated number is held with its spread where the paper gives one
    (:func:`spread_part`), as exact where it gives none (then the row says so); a meaningful difference of
    no stated size against the margin. Every bound is at the family's level (:attr:`Paired.level`)."""
    s, name = claim.direction, claim.parts[0]
    sig = math.isfinite(p.p_holm) and p.p_holm < 0.05
    p_s = p.p_text()
    if sig and np.sign(p.diff) != s:
        return "contradicted", f"{name} is reversed (the opposite sign, {p_s})"
    why = f"the paper's sign, {p_s}" if sig else f"not significant either way, {p_s}"
    note = ""
    stated = math.isfinite(claim.size) and claim.size > 0
    if stated and math.isfinite(claim.paper_se):
        word, note = spread_part(p, claim, why)
        if word == "contradicted":
            return word, f"{name} {note}"
    else:
        lo, hi = p.bounds()
        bound = hi if s > 0 else lo
        exact = "; the paper gives no spread for it: its number is held as exact" if stated else ""
        if math.isfinite(limit) and math.isfinite(bound) and s * bound < limit:
            what = (f"of the margin (±{limit:.3g}) or more" if math.isinf(claim.size)
                    else f"of the paper's {claim.stated_text()}")   # a finite size is its own limit (threshold)
            return "contradicted", f"{name} {what} is excluded ({p.bound_text()} bound {bound:+.3g}; {why}{exact})"
        # the same number from above: an effect larger than stated excludes the number as surely
        top, near = claim.stated_top, (lo if s > 0 else hi)
        if math.isfinite(top) and math.isfinite(near) and s * near > top:
            return "contradicted", (f"{name} of the paper's {claim.stated_text()} is excluded: the difference is "
                                    f"larger than stated ({p.bound_text()} bound {near:+.3g}; {why}{exact})")
        note = exact.lstrip("; ")
    tail = f"; {note}" if note else ""
    if sig:
        return "holds", f"{name} holds (the paper's sign, {p_s}){tail}"
    mdd = f"; detectable Δ {p.mdd_holm:.3g}" if math.isfinite(p.mdd_holm) else ""
    return "not shown", f"{name} is not shown ({p_s}{mdd}){tail}"


def spread_part(p: Paired, claim: Claim, why: str) -> tuple[str, str]:
    """The paper's stated number held with both uncertainties (docs/method.md section 11, "The paper's
    spread"): ours minus the paper's, with the standard error of each (ours from the paired seeds, the
    paper's ``paper_se`` from its ± SDs over its 5 seeds) and Welch-Satterthwaite degrees of freedom, at the
    family's level. A stated number that the paper's own spread cannot tell from zero (its two-sided 95% test
    of the number against 0 not significant) is not held at all: its point value contradicts nothing.
    ('contradicted' or 'kept', the sentence)."""
    s, size, top = claim.direction, claim.size, claim.stated_top
    se_p, df_p = claim.paper_se, claim.paper_df
    own = size / se_p if se_p > 0 else math.inf
    crit_p = float(stats.sps.t.ppf(0.975, df_p)) if math.isfinite(df_p) and df_p > 0 else 1.96
    if own < crit_p:
        return "kept", (f"the paper's own spread cannot tell its {claim.stated_text()} from zero (SE {se_p:.2g} from "
                        f"its ± SDs over 5 seeds, t = {own:.2g}): its number is not held against ours")
    se_o = p.sd / math.sqrt(p.n) if p.n > 1 else math.nan
    se = math.sqrt(se_o ** 2 + se_p ** 2)
    df = (se_o ** 2 + se_p ** 2) ** 2 / (se_o ** 4 / (p.n - 1) + (se_p ** 4 / df_p if math.isfinite(df_p) else 0.0))
    q = float(stats.sps.t.ppf(1 - (1 - p.level) / 2, df)) * se
    ours = s * p.diff   # our difference in the paper's direction
    both = f"SE {se:.2g} of ours and the paper's together, {df:.3g} df, {p.bound_text()}"
    if ours + q < size:
        return "contradicted", (f"of the paper's {claim.stated_text()} is excluded with both spreads (ours "
                                f"{p.diff:+.3g}; bound {s * (ours + q):+.3g}; {both}; {why})")
    if math.isfinite(top) and ours - q > top:
        return "contradicted", (f"of the paper's {claim.stated_text()} is excluded with both spreads: ours is larger "
                                f"(ours {p.diff:+.3g}; bound {s * (ours - q):+.3g}; {both}; {why})")
    return "kept", f"the paper's {claim.stated_text()} is not excluded with both spreads ({both})"


def equivalence_edges(p: Paired) -> tuple[float, float]:
    """(e_out, e_in) of the family's interval [lo, hi] (:attr:`Paired.level`; 90% for a family of one): a
    margin below e_out has the whole interval outside ±margin (a difference beyond it); a margin above e_in
    has it inside (TOST); in between neither is shown. e_out is 0 where the interval holds 0."""
    lo, hi = p.bounds()
    e_in = max(abs(lo), abs(hi))
    e_out = min(abs(lo), abs(hi)) if lo * hi > 0 else 0.0
    return e_out, e_in


def _equivalence_part(p: Paired, claim: Claim, m: float) -> tuple[str, str]:
    """A stated equivalence at margin ``m``, one interval both ways, at the family's level
    (:attr:`Paired.level`; 90% for a family of one): the interval inside ±m holds (TOST, each one-sided test
    at 0.05/k), wholly outside ±m contradicted, else not shown."""
    name = claim.parts[1]
    if not math.isfinite(m):
        return "not shown", f"{name}: no margin for this metric"
    t = stats.tost(p.n, p.diff, p.sd, m, alpha=(1 - p.level) / 2)
    lo, hi = t["ci90"]
    tost_s = f"TOST p = {t['p']:.2g}, {p.level_text()} [{lo:+.3g}, {hi:+.3g}]"
    if -m < lo and hi < m:
        return "holds", f"{name} holds within ±{m:.3g} ({tost_s})"
    if lo > m or hi < -m:
        return "contradicted", f"{name} fails: a difference beyond ±{m:.3g} (the {p.level_text()} lies outside it; {tost_s})"
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
    lo, hi = p.bounds()
    best, least = (hi, lo) if higher_is_better else (-lo, -hi)  # how much better it may be / at least is
    if best < m:
        return "holds", (f"{name} better by the margin {m:.3g} or more is excluded (at most {best:+.3g} better, "
                         f"{p.bound_text()})")
    if least > m:
        return "contradicted", f"{name} better by more than the margin {m:.3g} (at least {least:+.3g}, {p.bound_text()})"
    return "not shown", (f"{name} better by the margin {m:.3g} or more is not excluded (up to {best:+.3g} better, "
                         f"{p.bound_text()})")


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
                    f"{margin_text(m, m)}, {at[hi_m]} at {margin_text(hi_m * m, m)}; {word} "
                    f"{_range_text(*margin_range(p, claim, m), m)}; {body}")
        body += f"; the verdict holds {_range_text(*margin_range(p, claim, m), m)}"
    return f"{head}: {body}"
