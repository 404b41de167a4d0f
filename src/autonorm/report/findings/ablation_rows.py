"""The ledger's ablation rows (the paper's sections 3.6.2, 4.4 and 4.7): each ablation the paper
states, as a direction or a "comparable" we can test against its base, paired by seed; a check of
a choice of our own (the selector's width) is an observation."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from autonorm.analysis import stats
from autonorm.report.findings import rules
from autonorm.report.findings.commands import ABLATION_CMD, ABLATION_GPU_CMD
from autonorm.report.findings.rows import Row
from autonorm.report.findings.rules import Claim, Paired
from autonorm.report.findings.studies import Study
from autonorm.report.fmt import fnum, truthy
from autonorm.report.paper import quote, section_of


@dataclass(frozen=True)
class AblationTest:
    """An ablation claim as a test: the variant axis it is about (the config's ``variants.*.axis``),
    the claim, the dataset the paper names (None: any), the metric (None: the primary ones), the
    expected sign of variant − base in the metric's better direction (+1 / -1; 0: "comparable"),
    the size of the stated effect (0: none stated; math.inf: meaningful, no size), the paper's words, and
    the laptop command that would run it."""
    axis: str
    claim: str
    dataset: str | None
    metric: str | None
    sign: int
    size: float
    quote_key: str | None
    run: tuple[str, str]
    ours: bool = False  # a check of our own choice, not a claim of the paper


ABLATION_TESTS = (
    AblationTest("tau", "Gumbel temperature: tau = 0.5 is optimal, no other tau does better", None, None, -1, 0.0,
                 "tau", ("ptb_pos", "tau_0_1, tau_0_25, tau_1, tau_2")),
    AblationTest("selector", "Selector capacity: one linear layer loses 1.2 points of PTB accuracy", "ptb_pos",
                 "accuracy", -1, 1.2, "capacity", ("ptb_pos", "selector_linear")),
    AblationTest("selector_width", "Selector width (our choice; the paper gives none): a width-5 selector, at which "
                 "the selectors add < 1% parameters, does as well as our d/2", None, None, 0, 0.0, None,
                 ("mnist", "selector_width_5"), ours=True),
    AblationTest("gumbel", "Hard (straight-through) Gumbel converges significantly slower (epochs to 99% of the "
                 "final validation metric)", None, "epochs_to_99pct", +1, 0.0, "hard", ("ptb_pos", "gumbel_hard")),
    AblationTest("distill", "Distillation from the Teacher MLP: +0.4 to +0.8 points on vision (\"validation "
                 "stability\"; tested on test accuracy)", None, None, +1, 0.4, "distill", ("mnist", "distill")),
    AblationTest("gate3", "3-way gate (LN / RMSNorm / DyT) on PTB: \"comparable gains\" to the 2-way gate", "ptb_pos",
                 None, 0, 0.0, "gate3", ("ptb_pos", "gate_3")),
)


def _hits(st: Study, t: AblationTest) -> pd.DataFrame:
    ab = st.ctx.ablations
    if ab.empty:
        return ab
    hit = ab[(ab.axis.astype(str) == t.axis) & ~ab.is_base.map(truthy)]
    if t.dataset:
        hit = hit[hit.dataset == t.dataset]
    if t.metric:
        keep = hit.metric == t.metric
    elif t.sign == 0:  # "comparable": an equivalence, on the metrics the margin is defined for
        keep = hit.metric.isin(rules.MARGIN_METRICS) & hit.metric.map(lambda m: stats.metric_family(m) == "primary").astype(bool)
    else:
        keep = hit.metric.map(lambda m: stats.metric_family(m) == "primary").astype(bool)
    keep &= ~hit["note"].astype(str).str.startswith("same training runs")
    return hit.loc[keep]


def ablation_rows(studies: list[Study], reference: pd.DataFrame) -> list[Row]:
    rows = []
    for t in ABLATION_TESTS:
        claim = t.claim + (f"; the paper: {quote(t.quote_key)}" if t.quote_key else "")
        section = section_of(t.quote_key) if t.quote_key else "ours"
        found = next(((st, h) for st in studies if len(h := _hits(st, t))), None)
        if found is None:
            rows.append(Row(claim, section, "–", "–", "–", f"not testable here: not run in these studies; "
                            f"`{ABLATION_CMD.format(d=t.run[0], v=t.run[1])}` (paper scale: `{ABLATION_GPU_CMD}`)",
                            key=f"ablation:{t.axis}", observation=t.ours))
            continue
        st, hit = found
        for r in hit.to_dict("records"):
            ours, expected, verdict = ablation_verdict(r, t, reference)
            in_regime, why = rules.study_regime(st, reference, r["dataset"])
            # a check of our own choice has no paper claim to reproduce: its outcome without the verdict word
            verdict = ("observation: " + verdict.split(": ", 1)[-1] if t.ours
                       else rules.out_of_regime(verdict, in_regime, why))
            n = int(fnum(r["n_pairs"]) or 0)
            rows.append(Row(claim, section, st.where(r["dataset"], n=n), f"{r['variant']} − {r['base']}, "
                            f"{r['metric']}: Δ {ours}", expected, verdict, key=f"ablation:{t.axis}:{r['dataset']}",
                            in_regime=in_regime, n=n, observation=t.ours))
    return rows


def ablation_verdict(r: dict, t: AblationTest, reference: pd.DataFrame) -> tuple[str, str, str]:
    """(our difference, what the claim expects, verdict) of one ablation row (variant against its
    base, paired by seed), by the rules of report.findings.rules: "comparable" is an equivalence
    within the margin, a direction a signed difference (the margin too where the paper's effect is
    one it calls an improvement)."""
    metric = r["metric"]
    p = Paired(int(fnum(r["n_pairs"]) or 0), fnum(r["mean_diff_vs_base"]), fnum(r.get("sd_diff", math.nan)),
               fnum(r["p_vs_base_holm"]), fnum(r.get("mdd80_holm", math.nan)))
    if coarse_resolution(r):
        return (f"{p.diff:+g} in every seed", "variant − base > 0" if t.sign else "no difference",
                "not testable at this resolution: both arms reach 99% of their final value at the same epoch in "
                "every seed, and the metric counts whole epochs")
    m = rules.margin(metric, rules.paper_value(reference, r["dataset"], "frozen_ln", metric))
    sides = (str(r["variant"]), str(r["base"]))
    hib = stats.higher_is_better(metric) and metric not in stats.CONVERGENCE_METRICS
    if t.sign == 0:
        return p.text(), f"equivalent within ±{m:.3g}" if math.isfinite(m) else "no difference", \
            rules.judge(p, Claim(0, True, 0.0, sides, ("", "the equivalence" if t.ours else "\"comparable\""), hib), m)
    # t.sign is the paper's sign of the effect on the metric's own scale ("slower": more epochs)
    better_up = stats.higher_is_better(metric) or metric in stats.CONVERGENCE_METRICS
    direction = t.sign if better_up else -t.sign
    claim = Claim(direction, False, t.size, sides, ("the stated effect", ""), hib,
                  "faster" if metric in stats.CONVERGENCE_METRICS else "better")
    return p.text(), {1: "variant − base > 0", -1: "variant − base < 0"}[direction], rules.judge(p, claim, m)


def coarse_resolution(r: dict) -> bool:
    """An epoch-count metric whose paired differences are all equal (sd 0): its t-interval collapses
    to a point, which would read as a precise measurement; it is a 1-epoch grid hitting a ceiling."""
    return (r.get("metric") in stats.CONVERGENCE_METRICS and fnum(r.get("sd_diff")) == 0
            and int(fnum(r.get("n_pairs")) or 0) >= 2)
