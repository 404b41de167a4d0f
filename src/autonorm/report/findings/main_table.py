"""The ledger's rows for the paper's main tables (Tables 1-4): AutoNorm-S against each method the
table lists, per study that ran both, judged as the paper states it (report.findings.rules)."""
from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd

from autonorm.analysis import stats, trainings
from autonorm.report.findings import rules
from autonorm.report.findings.commands import WHY_GPU, command_for
from autonorm.report.findings.rows import Row, placement_words
from autonorm.report.findings.rules import Claim, Paired
from autonorm.report.findings.studies import Study, first_study
from autonorm.report.fmt import decimals, fmt, fnum, pretty, truthy
from autonorm.report.paper import DOUBTFUL, quote, section_of

#: the paper's own words about a comparison (dataset, other method) -> (quote keys, does it also
#: state an equivalence, the two parts' names). Every other comparison of a main table is the
#: table's signed difference (a lead where AutoNorm-S is the better).
STATED = {
    ("mnist", "frozen_ln"): (("mnist_lead",), True, ("the lead", "\"within the 95% CI\"")),
    ("mnist", "adanorm"): (("vision_competitive",), True, ("the table's lead", "\"competitive\"")),
    ("fashion_mnist", "frozen_ln"): (("fmnist_lead", "fmnist_competitive"), True,
                                     ("FrozenLN's lead", "\"highly competitive\"")),
    ("fashion_mnist", "adanorm"): (("vision_competitive",), True, ("the table's lead", "\"competitive\"")),
    ("california_housing", "frozen_ln"): (("california_lead",), True,
                                          ("the lead", "\"not statistically significant\"")),
    ("ptb_pos", "frozen_ln"): (("ptb_lead",), False, ("the lead", "")),
    ("sst2", "frozen_ln"): (("sst2_lead",), False, ("the lead", "")),
    ("cifar10c", "frozen_ln"): (("cifar10c",), False, ("the improvement", "")),
}
#: which table of the paper each dataset's numbers are in
TABLE_OF = {"mnist": 1, "fashion_mnist": 1, "cifar10": 1, "cifar100": 1, "svhn": 1, "energy_efficiency": 2,
            "california_housing": 2, "ptb_pos": 3, "sst2": 3, "cifar10c": 4}
#: the metrics whose words are the table's only (the paper states nothing in its text about them)
TABLE_ONLY = ("rotation_accuracy", "precision_macro", "recall_macro", "f1_macro", "mae")
#: secondary metrics: judged against FrozenLN only, and only where a study measured them; Table 3's F1
#: column (SST-2) against every method, since the NLP table's "on every metric" sentence covers it
SECONDARY = ("precision_macro", "recall_macro", "f1_macro")
#: a table's other metrics of the same runs are parts of one claim with its primary metric: the claim has
#: the primary metric's verdict, and its row names each secondary metric and any whose verdict disagrees
#: (docs/method.md section 11, "One claim, one verdict")
PRIMARY_OF = {"precision_macro": "accuracy", "recall_macro": "accuracy", "f1_macro": "accuracy", "mae": "rmse"}
CLAIM_LABEL = {"accuracy": "accuracy", "tag_perplexity": "tag perplexity", "rmse": "RMSE",
               "rotation_accuracy": "rotated-test accuracy", "mean_s3": "severity-3 mean accuracy",
               "gaussian_noise_s3": "gaussian noise s3", "motion_blur_s3": "motion blur s3",
               "brightness_s3": "brightness s3", "precision_macro": "precision", "recall_macro": "recall",
               "f1_macro": "F1", "mae": "MAE"}


def claim_of(d: str, metric: str, other: str, paper_diff: float) -> tuple[Claim, str, str]:
    """(what a main-table comparison claims, the quote to print, the paper's section)."""
    table = f"Table {TABLE_OF.get(d, '?')}"
    sides = ("AutoNorm-S", other)
    size = abs(paper_diff) if math.isfinite(paper_diff) else 0.0
    direction = int(math.copysign(1, paper_diff)) if math.isfinite(paper_diff) and paper_diff else 0
    keys, equivalence, parts = STATED.get((d, other), ((), False, ("the table's lead", "")))
    hib = stats.higher_is_better(metric)
    if metric in TABLE_ONLY or not keys:
        return Claim(direction, False, size, sides, ("the table's difference", ""), hib), "", table
    # a lead that only the table states is cited to the table beside the words that qualify it
    section = section_of(*keys) + (f"; {table}" if parts[0] == "the table's lead" else "")
    return Claim(direction, equivalence, size, sides, parts, hib), "; ".join(quote(k) for k in keys), section


def main_table_rows(studies: list[Study], reference: pd.DataFrame) -> list[Row]:
    rows = []
    ref = reference[reference.method == "autonorm_s"]
    for (d, metric), g in ref.groupby(["dataset", "metric"], sort=False):
        pa = float(g["mean"].iloc[0])
        others = reference[(reference.dataset == d) & (reference.metric == metric) & (reference.method != "autonorm_s")]
        if metric in PRIMARY_OF and not ref[(ref.dataset == d) & (ref.metric == PRIMARY_OF[metric])].empty:
            continue  # a part of its primary metric's claim (_secondary_text)
        src = rules.trained_on(d)
        label = f"{pretty(d)} {CLAIM_LABEL.get(metric, metric)}"
        if (d, metric) in DOUBTFUL:
            continue  # the paper-arithmetic rows say what these numbers are (paper_rows)
        tested = [m for m in others.method if first_study(studies, src, "autonorm_s", m)]
        if not tested:
            rows.append(_not_testable(d, src, metric, label, pa, others))
            continue
        for m, pb in zip(others.method, others["mean"]):
            rows += _comparison_rows(studies, reference, d, src, metric, label, m, pa, pb)
    return rows


def _not_testable(d, src, metric, label, pa, others) -> Row:
    # the paper's tables have no Random Selector row: its one Random number (CIFAR-10) is in section 4.1's text
    from_text = others.method == "random"
    cmp = ", ".join(f"{m} {fmt(v)}" + (" (the text, not the table)" if t else "")
                    for m, v, t in zip(others.method, others["mean"], from_text))
    why = WHY_GPU.get(d) or "no study here ran these methods on it; a CPU can"
    table = f"Table {TABLE_OF.get(d, '?')}" + ("; §4.1" if from_text.any() else "")
    keys = STATED.get((d, "frozen_ln"), ((), False, ("", "")))[0] if d == "cifar10c" else ()
    said = f"; the paper: {'; '.join(quote(k) for k in keys)}" if keys else ""
    return Row(f"{label}: AutoNorm-S {fmt(pa)} vs {cmp}{said}", table, "–", "–", f"AutoNorm-S {fmt(pa)}",
               f"not testable here ({why}): `{command_for(src)}`", key=f"main:{d}:{metric}")


def with_spread(claim: Claim, reference: pd.DataFrame, d: str, metric: str, a: str, b: str) -> Claim:
    """``claim`` with the standard error of the paper's difference a - b from its ± SDs over its 5 seeds
    (the paper gives no pairing: its seeds read as independent, the larger SE) and its Welch degrees of
    freedom; unchanged where the paper gives no SD for either (its number is then held as exact)."""
    sd = [rules.paper_std(reference, d, x, metric) for x in (a, b)]
    if not all(math.isfinite(x) for x in sd):
        return claim
    n = rules.PAPER_SEEDS
    va, vb = sd[0] ** 2 / n, sd[1] ** 2 / n
    if va + vb == 0:
        return claim
    return replace(claim, paper_se=math.sqrt(va + vb), paper_df=stats.welch_df(va, n, vb, n))


def _secondary_text(st, reference, d, metric, m, word: str) -> str:
    """The claim's secondary metrics (the same runs, another column of the table: precision, recall and F1
    beside accuracy, MAE beside RMSE), each with its difference, and those whose verdict by the same rule
    differs from the primary metric's ``word``."""
    comp = st.ctx.comparisons
    parts, disagree = [], []
    for sm in (x for x, prim in PRIMARY_OF.items() if prim == metric):
        c = comp[(comp.dataset == d) & (comp.metric == sm) & (comp.method_b == m)] if not comp.empty else comp
        pa, pb = (rules.paper_value(reference, d, x, sm) for x in ("autonorm_s", m))
        if c.empty or not (math.isfinite(pa) and math.isfinite(pb)):
            continue
        p = Paired.of(c.iloc[0])
        claim, _, _ = claim_of(d, sm, m, pa - pb)
        v = rules.judge(p, claim, rules.margin(sm, rules.paper_value(reference, d, "frozen_ln", sm)))
        parts.append(f"{CLAIM_LABEL.get(sm, sm)} Δ {p.diff:+.3g} (paper {pa - pb:+.3g})")
        if rules.category(v) != word:
            disagree.append(f"{CLAIM_LABEL.get(sm, sm)} reads {rules.category(v)} by the same rule (its number held "
                            "as exact: the paper gives it no spread)")
    if not parts:
        return ""
    agree = ("each reads the primary metric's verdict by the same rule" if not disagree
             else "disagreeing: " + "; ".join(disagree))
    return f"; the table's other columns, the same runs (parts of this claim): {', '.join(parts)}; {agree}"


def _comparison_rows(studies, reference, d, src, metric, label, m, pa, pb) -> list[Row]:
    paper_diff = pa - pb
    margin = rules.margin(metric, rules.paper_value(reference, d, "frozen_ln", metric))
    claim, said, section = claim_of(d, metric, m, paper_diff)
    claim = with_spread(claim, reference, d, metric, "autonorm_s", m)
    text = f"{label}: AutoNorm-S {fmt(pa)} vs {m} {fmt(pb)} (paper Δ {paper_diff:+.3g})"
    if said:
        text += f"; the paper: {said}"
    key = f"main:{d}:{metric}:{m}"
    tested_in = [st for st in studies if st.has(src, "autonorm_s") and st.has(src, m)]
    if not tested_in:
        return [Row(text, section, "–", "–", f"{paper_diff:+.3g}",
                    f"not testable here: no recorded study finished {m} on {pretty(src)}; "
                    f"`{command_for(src)}`", key=key)]
    out = []
    for st in tested_in:
        comp = st.ctx.comparisons
        c = comp[(comp.dataset == d) & (comp.metric == metric) & (comp.method_b == m)]
        if c.empty:
            out.append(Row(text, section, st.where(src), "–", f"{paper_diff:+.3g}", "not measured", key=key))
            continue
        c = c.iloc[0]
        p = Paired.of(c)
        in_regime, why = rules.study_regime(st, reference, d)
        mean_a, mean_b = fnum(c.get("mean_a")), fnum(c.get("mean_b"))
        judged = rules.judge(p, claim, margin)  # the primary metric's own verdict, before the band and regime
        one, apart = trainings.seeds(st.ctx.runs, src, "autonorm_s", m)
        if one and not apart:  # one training read under two names (analysis.trainings)
            verdict, band = "not testable here: the two methods are the same training", ""
        else:
            # the band first, then the regime: a row out of the regime says what its runs say with the band's
            # caveat, as a row in it would
            verdict, band = _both_arms(st, reference, d, metric, m, mean_a, mean_b, judged)
            verdict = rules.out_of_regime(verdict, in_regime, why)
        ours = (f"Δ {p.text()}; over these seeds AutoNorm-S {fmt(mean_a)}, "
                f"{st.ctx.method_label(src, m)} {fmt(mean_b)}")
        if band:
            ours += f" ({band})"
        ours += _secondary_text(st, reference, d, metric, m, rules.category(judged))
        placement = st.placement(src)
        out.append(Row(text, section, f"{st.where(src, n=p.n)}, one selector {placement_words(placement)}", ours,
                       f"{paper_diff:+.3g}", verdict, key=key, in_regime=in_regime, n=p.n, placement=placement))
    return out


def _both_arms(st: Study, reference: pd.DataFrame, d: str, metric: str, other: str, mean_a: float,
               mean_b: float, verdict: str) -> tuple[str, str]:
    """Both arms of AutoNorm-S against ``other`` by one band, both ways (frozen_ln's band is the regime
    itself): an arm far from the paper's number for it decides nothing where its deviation points the way
    the result went (rules.both_arms)."""
    bands = {a: rules.arm_band(st.ctx.summary, reference, d, metric, a) for a in ("autonorm_s", other)
             if a != "frozen_ln"}
    ahead = rules.ahead_of_paper(mean_a, mean_b, rules.paper_value(reference, d, "autonorm_s", metric),
                                 rules.paper_value(reference, d, other, metric), stats.higher_is_better(metric))
    return rules.both_arms(verdict, bands, "autonorm_s", other, ahead)


def ptb_perplexity_rows(studies: list[Study], reference: pd.DataFrame) -> list[Row]:
    """The paper's PTB perplexity ordering, AutoNorm-S below each other method of Table 3 (against
    FrozenLN, the strongest static baseline, "p < 0.01"; the others by the table's bold): testable
    whatever its "perplexity" is, since a per-token and a per-sentence reading order the models alike."""
    pa = rules.paper_value(reference, "ptb_pos", "autonorm_s", "tag_perplexity")
    ref = reference[(reference.dataset == "ptb_pos") & (reference.metric == "tag_perplexity")
                    & (reference.method != "autonorm_s")]
    rows = []
    for m, pb in zip(ref.method, ref["mean"]):
        said = f"; the paper: {quote('ptb_perplexity_order')}" if m == "frozen_ln" else ""
        claim_text = f"PTB tag perplexity ordering: AutoNorm-S below {m} ({fmt(pa)} vs {fmt(pb)}){said}"
        section = section_of("ptb_perplexity_order") + "; Table 3" if said else "Table 3 (bold)"
        claim = Claim(-1, False, 0.0, ("AutoNorm-S", m), ("the lower perplexity", ""), higher_is_better=False)
        found = False
        for st in studies:
            comp = st.ctx.comparisons
            c = comp[(comp.dataset == "ptb_pos") & (comp.metric == "tag_perplexity") & (comp.method_b == m)] \
                if not comp.empty else comp
            if c.empty:
                continue
            found = True
            p = Paired.of(c.iloc[0])
            in_regime, why = rules.study_regime(st, reference, "ptb_pos")
            # both arms by one band, as every row that compares two of the tables' arms (rules.both_arms), then
            # the regime
            verdict, band = _both_arms(st, reference, "ptb_pos", "tag_perplexity", m, fnum(c.iloc[0].get("mean_a")),
                                       fnum(c.iloc[0].get("mean_b")), rules.judge(p, claim, math.nan))
            verdict = rules.out_of_regime(verdict, in_regime, why)
            rows.append(Row(claim_text, section, st.where_gated("ptb_pos", n=p.n),
                            f"Δ {p.text()} (exp of the mean token cross-entropy)" + (f" ({band})" if band else ""),
                            f"{pa - pb:+.3g}", verdict,
                            key=f"ptb_perplexity_order:{m}", in_regime=in_regime, n=p.n,
                            placement=st.placement("ptb_pos")))
        if not found:
            rows.append(Row(claim_text, section, "–", "–", f"{pa - pb:+.3g}",
                            f"not testable here: `{command_for('ptb_pos')}`", key=f"ptb_perplexity_order:{m}"))
    return rows


def _four_figures(v: float) -> str:
    """A mean to about 4 figures, trailing zeros kept: 0.4560 beside 0.4624, not 0.456."""
    return fmt(v, decimals(fnum(v)))


def learning_rows(studies: list[Study], reference: pd.DataFrame) -> list[list[str]]:
    """Per study and dataset: how far its models got, beside the paper's and the trivial
    baseline, so that a verdict is read with the configuration it was measured in."""
    rows = []
    for st in studies:
        s = st.ctx.summary
        if s.empty:
            continue
        prim = s[(s.metric_family == "primary") & s.metric.isin(("accuracy", "rmse")) & (s["n"].fillna(0) > 0)]
        for (d, metric), g in prim.groupby(["dataset", "metric"], sort=False):
            hib = stats.higher_is_better(metric)
            best = g.loc[g["mean"].idxmax() if hib else g["mean"].idxmin()]
            fl = g[g.method == "frozen_ln"]
            paper = reference[(reference.dataset == d) & (reference.metric == metric)]
            pfl = paper[paper.method == "frozen_ln"]["mean"]
            pas = paper[paper.method == "autonorm_s"]["mean"]
            trivial = g["baseline_value"].dropna()
            flagged = [m for m, v in zip(g.method, g.at_or_below_baseline) if truthy(v)]
            in_regime, _ = rules.study_regime(st, reference, d)
            # a best over fewer seeds than the study's most says so: a mean of one seed is no mean of five
            fewer = f" (n={int(best['n'])} of {int(g['n'].max())})" if best["n"] < g["n"].max() else ""
            label = st.ctx.method_label(d, best.method)
            rows.append([st.name, pretty(d), metric, f"{label} {_four_figures(best['mean'])}{fewer}",
                         _four_figures(fl["mean"].iloc[0]) if len(fl) else "–",
                         (f"{fmt(pfl.iloc[0])} / {fmt(pas.iloc[0])}" if len(pfl) and len(pas)
                          else (fmt(pas.iloc[0]) if len(pas) else "–")) + (" †" if (d, metric) in DOUBTFUL else ""),
                         fmt(trivial.iloc[0]) if len(trivial) else "–",
                         {True: "yes", False: "no", None: "–"}[in_regime], ", ".join(flagged) or "none"])
    return rows



def within_ci_general_rows(studies: list[Study], reference: pd.DataFrame) -> list[Row]:
    """§4: "differences between AutoNorm-S and the best static baseline frequently fall within the 95%
    confidence interval on stationary datasets", per study and stationary vision dataset: the best static
    baseline is our better of frozen_ln and DyT (the static norms), and "within the 95% CI" is read as
    every such statement here, an equivalence within the margin (TOST)."""
    from autonorm.report.findings.gate_rows import STATIONARY_VISION

    rows = []
    for st in studies:
        comp = st.ctx.comparisons
        if comp.empty:
            continue
        for d in STATIONARY_VISION:
            c = comp[(comp.dataset == d) & (comp.metric == "accuracy") & comp.method_b.isin(("frozen_ln", "dyt"))
                     & (comp["n"].fillna(0) > 0)]  # a study with the baseline only (a pilot) pairs no seed
            if c.empty:
                continue
            best = c.loc[c.mean_b.astype(float).idxmax()]
            p = Paired.of(best)
            m = rules.margin("accuracy", rules.paper_value(reference, d, "frozen_ln", "accuracy"))
            claim = Claim(0, True, 0.0, ("AutoNorm-S", str(best.method_b)), ("", "\"within the 95% CI\""))
            in_regime, why = rules.study_regime(st, reference, d)
            verdict, band = _both_arms(st, reference, d, "accuracy", str(best.method_b), fnum(best.get("mean_a")),
                                       fnum(best.get("mean_b")), rules.judge(p, claim, m))
            verdict = rules.out_of_regime(verdict, in_regime, why)
            rows.append(Row(f"{pretty(d)}: AutoNorm-S within the 95% CI of the best static baseline on a stationary "
                            f"dataset; the paper: {quote('within_ci_general')}", section_of("within_ci_general"),
                            st.where_gated(d, n=p.n), f"AutoNorm-S − {best.method_b} (the better static norm here): "
                            f"Δ {p.text()}" + (f" ({band})" if band else ""), "within the 95% CI", verdict,
                            key="within_ci_general", in_regime=in_regime, n=p.n, placement=st.placement(d),
                            counts=False))
    return rows + [_within_ci_frequency_row(rows)] if rows else []


def _within_ci_frequency_row(rows: list[Row]) -> Row:
    """§4's "frequently ... on stationary datasets" is one claim over the paper's stationary vision datasets: the
    counted row reads each dataset's best in-regime row (above, which only support) and decides the frequency
    only where most of the datasets were tested in the paper's regime."""
    from autonorm.report.findings.gate_rows import STATIONARY_VISION

    best: dict[str, Row] = {}
    for r in rows:
        d = next((x for x in STATIONARY_VISION if r.claim.startswith(f"{pretty(x)}:")), None)
        if d and r.in_regime and (d not in best or r.n > best[d].n):
            best[d] = r
    words = {d: rules.category(r.verdict) for d, r in best.items()}
    tested = ", ".join(f"{pretty(d)} ({r.where.split(':')[0]}): {r.verdict[:200].rsplit(';', 1)[0]}"
                       for d, r in best.items()) or "none"
    need = len(STATIONARY_VISION) // 2 + 1
    held = sum(w == "reproduced" for w in words.values())
    failed = sum(w == "contradicted" for w in words.values())
    if held >= need:
        verdict = f"reproduced: within on {held} of the {len(STATIONARY_VISION)} stationary datasets"
    elif failed > len(STATIONARY_VISION) - need:
        verdict = f"contradicted: outside on {failed} of the {len(STATIONARY_VISION)} stationary datasets"
    else:
        verdict = (f"inconclusive: a frequency over the paper's {len(STATIONARY_VISION)} stationary vision datasets "
                   f"({', '.join(pretty(d) for d in STATIONARY_VISION)}), tested in the paper's regime on {len(best)}"
                   f"; it is decided on {need} of them (ours: frequently read as most)")
    n = min((r.n for r in best.values()), default=0)
    return Row(f"AutoNorm-S within the 95% CI of the best static baseline, frequently, on stationary datasets; the "
               f"paper: {quote('within_ci_general')}", section_of("within_ci_general"),
               f"the in-regime rows above: {len(best)} of {len(STATIONARY_VISION)} datasets", tested,
               "within the 95% CI, frequently", verdict, key="within_ci_general", in_regime=bool(best) or None, n=n,
               placement="per_block" if best else "")
