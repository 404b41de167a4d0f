"""At a glance: one row per dataset, the reference method against static LN with power,
the paper's difference and the trivial baseline (the report's first table)."""
from __future__ import annotations

import math

from autonorm.analysis import stats
from autonorm.report.context import ReportContext
from autonorm.report.fmt import fmt, fmt_diff, fmt_p, fnum, md_table, truthy
from autonorm.report.paper import DOUBTFUL, DOUBTFUL_SECTION
from autonorm.report.sections.results import ours, fmt_mdd


def glance_section(ctx: ReportContext) -> str:
    """One row per dataset: the reference against static LN (the paper's main comparison),
    with power, the paper's difference, the trivial baseline and our best method."""
    summary, comp = ctx.summary, ctx.comparisons
    ref = ctx.reference_method
    if summary.empty:
        return ""
    rows, doubtful = [], set()
    main = summary[(summary.metric_family == "primary") & (summary.dataset == summary.source_dataset)]
    for d in dict.fromkeys(main["dataset"]):
        sd = main[main.dataset == d]
        metric = next((m for m in ("accuracy", "rmse", "tag_perplexity") if m in set(sd.metric)),
                      None)
        if metric is None:
            continue
        sm = sd[sd.metric == metric].set_index("method")
        hib = stats.higher_is_better(metric)
        arrow = "↑" if hib else "↓"
        r_ref = sm.loc[ref] if ref in sm.index else None
        other = "frozen_ln" if "frozen_ln" in sm.index else None
        if other is None:
            # no static-LN run: the strongest other method that is not the same training
            cands = sm[(sm.index != ref) & (sm["n"] > 0)]
            cands = cands[[ctx.same_run_as(d, m) != ref for m in cands.index]]
            if len(cands):
                other = cands["mean"].idxmax() if hib else cands["mean"].idxmin()
        c = None
        if other is not None and not comp.empty:
            cc = comp[(comp.dataset == d) & (comp.metric == metric) & (comp.method_b == other)]
            c = cc.iloc[0] if len(cc) else None
        have = sm[sm["n"] > 0]
        have = have.loc[sorted(have.index, key=lambda m: m != ref)]  # ties go to the reference
        best = (have["mean"].idxmax() if hib else have["mean"].idxmin()) if len(have) else "–"
        bl = "–"
        if r_ref is not None and math.isfinite(fnum(r_ref.get("baseline_value"))):
            bl = fmt(r_ref["baseline_value"])
        flagged = [m for m, r in sm.iterrows() if truthy(r.get("at_or_below_baseline"))]
        delta = p = mdd = pdiff = "–"
        n = "0"
        if c is not None:
            n = str(int(fnum(c["n"]) or 0))
            delta = fmt_diff(c["mean_diff"], c["mean_a"])
            if int(fnum(c["n"]) or 0) < stats.MIN_N_POWER:
                p = mdd = f"no power (n={n})"
            else:
                p = fmt_p(c["p_holm"]) if math.isfinite(fnum(c["p_holm"])) else "no test"
                mdd = fmt_mdd(c["mdd80_holm"], c["mean_a"])
            if not ctx.standin(d):
                if (d, metric) in DOUBTFUL:
                    pdiff = "† not comparable"
                    doubtful.add((d, metric))
                else:
                    pdiff = fmt_diff(c.get("paper_diff"), c["mean_a"])
        rows.append([ctx.label(d), f"{metric} {arrow}", n,
                     ours(r_ref) if r_ref is not None else "–",
                     f"{ctx.method_label(d, other)}: {ours(sm.loc[other])}" if other else "–", delta, p,
                     mdd, pdiff, bl, ", ".join(f"**{m}**" for m in flagged) or "none",
                     ctx.method_label(d, best) if best != "–" else best])
    if not rows:
        return ""
    lines = ["## At a glance", "",
             f"{ref} against frozen_ln (static LN, the paper's \"Disable Selector\"; where it "
             "did not run, the strongest other method) on each dataset's primary metric; every "
             "method and metric follows in the family sections.", "",
             md_table(["dataset", "metric", "n pairs", ref, "compared with", f"Δ ({ref} − it)",
                       "p (Holm)", "detectable Δ (80% power, Holm level)", "paper Δ", "trivial baseline",
                       "at or below trivial", "best of ours"], rows), ""]
    for key in sorted(doubtful):
        lines += [f"† {DOUBTFUL[key]} (docs/method.md section {DOUBTFUL_SECTION[key]}).", ""]
    return "\n".join(lines)
