"""The ledger's ablation rows (the paper's sections 3.6.2, 4.4 and 4.7): each ablation the paper
states, as a direction or a "comparable" we can test against its base, paired by seed; a check of
a choice of our own (the selector's width) is an observation."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from autonorm.analysis import stats
from autonorm.report.findings import rules
from autonorm.report.findings.commands import ABLATION_CMD, ABLATION_GPU_CMD, WHY_GPU
from autonorm.report.findings.rows import Row
from autonorm.report.findings.rules import Claim, Paired
from autonorm.report.findings.studies import Study
from autonorm.report.fmt import fnum, pretty, truthy
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
    size_hi: float = math.nan  # the top of a stated range ("0.4%--0.8%"); NaN: the size is a point
    name: str = ""  # the claim's key where one axis carries two claims (default: the axis)
    #: the datasets the paper names for a general claim ("especially on CIFAR-100 and PTB"): a row on another
    #: dataset only supports; empty: every dataset counts
    named: tuple[str, ...] = ()


ABLATION_TESTS = (
    AblationTest("tau", "Gumbel temperature: tau = 0.5 is optimal: no other tau of the grid does better "
                 "by the margin (non-superiority)", None, None, -1, 0.0, "tau", ("ptb_pos", "tau_0_1, tau_0_25, tau_1, tau_2")),
    AblationTest("selector", "Selector capacity: one linear layer loses 1.2 points of PTB accuracy", "ptb_pos",
                 "accuracy", -1, 1.2, "capacity", ("ptb_pos", "selector_linear")),
    AblationTest("selector_width", "Selector width (our choice; the paper gives none): a width-5 selector (at which "
                 "the selectors add < 1% parameters on the paper's ViT-Lite 8 x 128, not on the smaller models a laptop "
                 "study trains) does as well as our d/2", None, None, 0, 0.0, None,
                 ("mnist", "selector_width_5"), ours=True),
    AblationTest("gumbel", "Hard (straight-through) Gumbel converges significantly slower (the mean of the "
                 "validation curve over epochs, negated for an RMSE: lower is slower)", None, "val_curve_mean", -1, 0.0, "hard",
                 ("ptb_pos", "gumbel_hard"), named=("cifar100", "ptb_pos")),
    AblationTest("gumbel", "Hard (straight-through) Gumbel learns worse: the soft relaxation's gradient is essential "
                 "for effective learning (the final test metric, worse by the margin)", None, None, -1, math.inf,
                 "smooth_gradient", ("ptb_pos", "gumbel_hard"), name="gumbel_essential", named=("cifar100", "ptb_pos")),
    AblationTest("selector", "Beyond the paper's scope: a linear selector on tabular data (the paper's 1.2-point loss "
                 "is on PTB), worse than the MLP by the margin or not", "california_housing", "rmse", -1, math.inf,
                 None, ("california_housing", "selector_linear"), ours=True, name="selector_tabular"),
    AblationTest("distill", "Distillation from the Teacher MLP: +0.4 to +0.8 points of \"validation stability\" on "
                 "vision (a quantity the paper does not define: test accuracy stands in for it)", None, None, +1, 0.4,
                 "distill", ("mnist", "distill"), size_hi=0.8),
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
        # every study that ran the variant has its rows; the claim is counted once, by its best evidence
        found = [(st, h) for st in studies if len(h := _hits(st, t))]
        if not found:
            rows.append(Row(claim, section, "–", "–", "–", f"not testable here: not run in these studies; "
                            f"`{ABLATION_CMD.format(d=t.run[0], v=t.run[1])}` (paper scale: `{ABLATION_GPU_CMD}`)",
                            key=f"ablation:{t.name or t.axis}", observation=t.ours))
            continue
        for st, hit in found:
            rows += tau_rows(st, t, hit, reference, claim, section) if t.axis == "tau" else \
                _ablation_study_rows(st, t, hit, reference, claim, section)
    rows.append(Row("Hard (straight-through) Gumbel converges significantly slower on CIFAR-100; the paper: "
                    f"{quote('hard')}", section_of("hard"), "–", "–", "slower",
                    f"not testable here ({WHY_GPU['cifar100']}): `{ABLATION_GPU_CMD}`", key="ablation:gumbel:cifar100"))
    return rows


def _ablation_study_rows(st: Study, t: AblationTest, hit: pd.DataFrame, reference: pd.DataFrame, claim: str,
                         section: str) -> list[Row]:
    rows = []
    for r in hit.to_dict("records"):
        ours, expected, verdict = ablation_verdict(r, t, reference)
        in_regime, why = rules.study_regime(st, reference, r["dataset"])
        # a check of our own choice has no paper claim to reproduce: its outcome without the verdict word
        verdict = ("observation: " + verdict.split(": ", 1)[-1] if t.ours
                   else rules.out_of_regime(verdict, in_regime, why))
        n = int(fnum(r["n_pairs"]) or 0)
        elsewhere = bool(t.named) and r["dataset"] not in t.named
        rows.append(Row(claim, section, st.where(r["dataset"], n=n) + (
                        f" (the paper names {', '.join(pretty(x) for x in t.named)}: this dataset supports)"
                        if elsewhere else ""), f"{r['variant']} − {r['base']}, "
                        f"{r['metric']}: Δ {ours}", expected, verdict, key=f"ablation:{t.name or t.axis}",
                        in_regime=in_regime, n=n, observation=t.ours, counts=not elsewhere))
    return rows


def tau_grid_gaps(taus) -> list[str]:
    """What keeps the taus a study ran on one dataset (the ablation table's ``value`` of the tau axis, from
    config.yaml ``variants``) from testing "0.5 is optimal": the claim is a peak, so the grid must bracket
    0.5 (a tau below it and one above). Read from the runs alone, so a study read from its record and from
    its results folder says the same."""
    values = [fnum(x) for x in taus]
    return ([] if any(x < 0.5 for x in values) else ["no tau below 0.5 was run"]) + \
           ([] if any(x > 0.5 for x in values) else ["no tau above 0.5 was run"])


def tau_rows(st: Study, t: AblationTest, hit: pd.DataFrame, reference: pd.DataFrame, claim: str,
             section: str) -> list[Row]:
    """"tau = 0.5 provides the optimal balance", per dataset: a non-superiority claim, no other tau of the
    grid better by the margin (rules.non_superiority on each, variant − base); contradicted where one is,
    reproduced where the taus run bracket 0.5 and none is, else inconclusive."""
    rows = []
    for d, g in hit.groupby("dataset", sort=False):
        metric_rows = g[g.metric.isin(("accuracy", "rmse"))]
        parts, words = [], []
        for r in metric_rows.to_dict("records"):
            p = Paired(int(fnum(r["n_pairs"]) or 0), fnum(r["mean_diff_vs_base"]), fnum(r.get("sd_diff", math.nan)),
                       fnum(r["p_vs_base_holm"]), fnum(r.get("mdd80_holm", math.nan)), _count(r.get("holm_m")))
            m = rules.margin(r["metric"], rules.paper_value(reference, d, "frozen_ln", r["metric"]))
            word, text = rules.non_superiority(p, m, str(r["variant"]), stats.higher_is_better(r["metric"]))
            parts.append(f"{r['variant']}: Δ {p.text()}; {text}")
            words.append(word)
        gaps = tau_grid_gaps(metric_rows.value)
        if "contradicted" in words:
            verdict = "contradicted: " + "; ".join(x for x, w in zip(parts, words) if w == "contradicted")
        elif words and all(w == "holds" for w in words) and not gaps:
            verdict = "reproduced: no tau of the grid is better by the margin"
        else:
            why = (gaps if words else []) + \
                  (["not every tau run is excluded from being better by the margin"] if "not shown" in words else [])
            verdict = "inconclusive: " + "; ".join(why or ["no tau of the grid was run"])
        in_regime, why = rules.study_regime(st, reference, d)
        n = int(fnum(metric_rows["n_pairs"].min()) or 0) if len(metric_rows) else 0
        rows.append(Row(claim, section, st.where_gated(d, n=n), "; ".join(parts) or "–",
                        "no tau better than 0.5 by the margin", rules.out_of_regime(verdict, in_regime, why),
                        key="ablation:tau", in_regime=in_regime, n=n, placement=st.placement(d)))
    return rows


def ablation_verdict(r: dict, t: AblationTest, reference: pd.DataFrame) -> tuple[str, str, str]:
    """(our difference, what the claim expects, verdict) of one ablation row (variant against its
    base, paired by seed), by the rules of report.findings.rules: "comparable" is an equivalence
    within the margin, a direction a signed difference (the margin too where the paper's effect is
    one it calls an improvement)."""
    metric = r["metric"]
    p = Paired(int(fnum(r["n_pairs"]) or 0), fnum(r["mean_diff_vs_base"]), fnum(r.get("sd_diff", math.nan)),
               fnum(r["p_vs_base_holm"]), fnum(r.get("mdd80_holm", math.nan)), _count(r.get("holm_m")))
    if coarse_resolution(r):
        return (f"{p.diff:+g} in every seed", "variant − base > 0" if t.sign else "no difference",
                "not testable at this resolution: both arms reach 99% of their final value at the same epoch in "
                "every seed, and the metric counts whole epochs")
    m = rules.margin(metric, rules.paper_value(reference, r["dataset"], "frozen_ln", metric))
    sides = (str(r["variant"]), str(r["base"]))
    hib = stats.higher_is_better(metric)
    if t.sign == 0:
        return p.text(), f"equivalent within ±{m:.3g}" if math.isfinite(m) else "no difference", \
            rules.judge(p, Claim(0, True, 0.0, sides, ("", "the equivalence" if t.ours else "\"comparable\""), hib), m)
    # t.sign is the paper's sign of the effect on the metric's own scale ("slower": more epochs)
    better_up = stats.higher_is_better(metric) or metric == "epochs_to_99pct"
    direction = t.sign if better_up else -t.sign
    claim = Claim(direction, False, t.size, sides, ("the stated effect", ""), hib,
                  "faster" if metric in stats.CONVERGENCE_METRICS else "better", t.size_hi)
    return p.text(), {1: "variant − base > 0", -1: "variant − base < 0"}[direction], rules.judge(p, claim, m)


def _count(x) -> int:
    """A count from a table cell (0 where empty)."""
    v = fnum(x)
    return int(v) if math.isfinite(v) else 0


def coarse_resolution(r: dict) -> bool:
    """An epoch-count metric whose paired differences are all equal (sd 0): its t-interval collapses
    to a point, which would read as a precise measurement; it is a 1-epoch grid hitting a ceiling."""
    return (r.get("metric") in stats.CONVERGENCE_METRICS and fnum(r.get("sd_diff")) == 0
            and int(fnum(r.get("n_pairs")) or 0) >= 2)


#: ours: "uniform soft-blending" read as a seed-mean final entropy within 10% of the largest, ln 2
UNIFORM_SHARE = 0.9


def tau_blend_rows(studies: list[Study], reference: pd.DataFrame) -> list[Row]:
    """§4.4: high temperatures (tau > 1) "yield uniform soft-blending", low ones (tau -> 0) "collapse to hard
    discrete selection": per study and dataset with the grid's largest tau above 1 and its smallest, the
    seed-mean gate entropy at the last epoch: uniform (ours) at least 90% of ln 2, hard below eps_H."""
    from autonorm.report.paper import H_ZERO

    claim = f"Temperature: tau > 1 blends uniformly, tau -> 0 selects hard; the paper: {quote('tau_soft')}; {quote('tau_hard')}"
    rows = []
    for st in studies:
        h, ab = st.ctx.history, st.ctx.ablations
        if h.empty or ab.empty:
            continue
        taus = ab[(ab.axis.astype(str) == "tau") & ~ab.is_base.map(truthy)]
        for d, g in taus.groupby("dataset", sort=False):
            vals = {str(v): fnum(x) for v, x in zip(g.variant, g.value)}
            hot = [v for v, x in vals.items() if x > 1]
            cold = min(vals, key=vals.get) if vals else None
            if not hot or cold is None or vals[cold] >= 0.5:
                continue
            hot = max(hot, key=vals.get)

            def final_h(m):
                hm = h[(h.dataset == d) & (h.method == m)]
                last = hm[hm.epoch == hm.groupby("seed").epoch.transform("max")]
                return float(last.mean_entropy.mean()), last.seed.nunique()

            (h_hot, n1), (h_cold, n2) = final_h(hot), final_h(cold)
            if not (math.isfinite(h_hot) and math.isfinite(h_cold)):
                continue
            by_tau = {vals[v]: final_h(v)[0] for v in vals}
            base = str(g.base.iloc[0]) if "base" in g else "autonorm_s"
            by_tau.setdefault(0.5, final_h(base)[0])  # the base's tau (config.yaml: autonorm.tau)
            by_tau = {t: x for t, x in sorted(by_tau.items()) if math.isfinite(x)}
            trend = ", ".join(f"tau {t:g}: {x:.3f}" for t, x in by_tau.items())
            hs = list(by_tau.values())
            rising = all(b >= a for a, b in zip(hs, hs[1:]))
            uniform, hard = h_hot >= UNIFORM_SHARE * math.log(2), h_cold < H_ZERO
            short = ([] if uniform else [f"tau {vals[hot]:g} is not uniform by our threshold (H {h_hot:.3f} < "
                                         f"{UNIFORM_SHARE * math.log(2):.3f})"]) + \
                ([] if hard else [f"tau {vals[cold]:g} is not hard by our threshold (H {h_cold:.3f} >= {H_ZERO})"])
            said = (f"the gates' entropy {'rises' if rising else 'does not rise'} with tau"
                    f"{', the direction the paper describes' if rising else ''}")
            if not short:
                verdict = f"reproduced: both, and {said}"
            elif rising:
                verdict = (f"inconclusive: {said}, but {'; '.join(short)}, measured on the trained gates without "
                           "Gumbel noise; the paper's sentence may mean the relaxation during training, where the "
                           "noise blends more, and does not say")
            else:
                verdict = f"contradicted: {said}, and {'; '.join(short)}"
            in_regime, why = rules.study_regime(st, reference, d)
            rows.append(Row(claim, section_of("tau_soft"), st.where_gated(d, n=min(n1, n2)),
                            f"seed-mean gate entropy at the last epoch, softmax(logits / tau) without Gumbel noise: "
                            f"{trend} (ln 2 = {math.log(2):.3f})",
                            f"uniform (ours: H >= {UNIFORM_SHARE:g} ln 2) / hard (ours: H < eps_H = {H_ZERO})",
                            rules.out_of_regime(verdict, in_regime, why), key="ablation:tau_blend",
                            in_regime=in_regime, n=min(n1, n2), placement=st.placement(d)))
    if not rows:
        rows.append(Row(claim, section_of("tau_soft"), "–", "–", "–", "not testable here: no study ran the "
                        f"temperature variants; `{ABLATION_CMD.format(d='ptb_pos', v='tau_0_1, tau_2')}`",
                        key="ablation:tau_blend"))
    return rows
