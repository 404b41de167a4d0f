"""Main results: per family, per dataset, our numbers beside the paper's with tests,
power, the trivial baseline, secondary metrics and cost."""
from __future__ import annotations

import math

import pandas as pd

from autonorm.analysis import stats
from autonorm.report.context import FAMILIES, ReportContext
from autonorm.report.fmt import (decimals, fmt, fmt_ci, fmt_cost, fmt_diff, fmt_ms, fmt_p,
                                 fnum, md_table, text, truthy)
from autonorm.report.paper import DOUBTFUL, DOUBTFUL_SECTION, RANDOM_VS_AUTONORM
from autonorm.report.sections.datasets import baseline_text

LATENCY_CAVEAT = ("Latency is measured once per run on whatever machine ran the job, often "
                  "sharing its CPU with other jobs: methods with identical FLOPs have differed "
                  "3-6x this way. Read it as noise unless the runs were timed on a quiet, "
                  "dedicated machine (the benchmarks/ folder and README describe that); "
                  "parameters and FLOPs are exact.")


def ours(r) -> str:
    if not fnum(r["n"]) or int(fnum(r["n"])) == 0:
        return "no result"
    return fmt_ms(r["mean"], r["std"], r["n"])


def _n(r) -> str:
    n = int(fnum(r["n"])) if math.isfinite(fnum(r["n"])) else 0
    extra = []
    for col, word in (("n_diverged", "diverged"), ("n_missing", "missing"), ("n_stale", "stale")):
        k = fnum(r.get(col, 0))
        if math.isfinite(k) and int(k):
            extra.append(f"{int(k)} {word}")
    return f"{n}" + (f" ({', '.join(extra)})" if extra else "")


def _paper(r, d: str) -> str:
    pm = fnum(r.get("paper_mean"))
    if not math.isfinite(pm):
        return "–"
    return fmt_ms(pm, r.get("paper_std")) + (" †" if (d, r["metric"]) in DOUBTFUL else "")


def _vs_trivial(r) -> str:
    v = r.get("at_or_below_baseline")
    if not math.isfinite(fnum(r.get("baseline_value"))) or int(fnum(r["n"]) or 0) == 0:
        return "–"
    return "**not better**" if truthy(v) else "better"


def fmt_mdd(v, like) -> str:
    """The detectable difference, to the decimals of the metric's mean."""
    v = fnum(v)
    if not math.isfinite(v):
        return "–"
    if v == 0:
        return "0 (no spread)"
    return f"{v:.{decimals(fnum(like))}f}"


def order_rows(df: pd.DataFrame, ref: str) -> pd.DataFrame:
    """Rows grouped by metric (in order of appearance), the reference method first."""
    if df.empty:
        return df
    metric_pos = {m: i for i, m in enumerate(dict.fromkeys(df["metric"]))}
    method_pos = {m: i for i, m in enumerate(dict.fromkeys(df["method"]))}
    key = [(metric_pos[r.metric], 0 if r.method == ref else 1, method_pos[r.method])
           for r in df.itertuples(index=False)]
    return df.iloc[sorted(range(len(df)), key=lambda i: key[i])]


def _cmp_row(cmp_d: pd.DataFrame, metric: str, method: str):
    if cmp_d.empty:
        return None
    c = cmp_d[(cmp_d.metric == metric) & (cmp_d.method_b == method)]
    return c.iloc[0] if len(c) else None


def _method_cell(ctx: ReportContext, d: str, m: str) -> str:
    same = ctx.same_run_as(d, m)
    name = ctx.method_label(d, m)
    return f"{name} (= {same}: same runs)" if same else name


def primary_table(ctx: ReportContext, d: str, sd: pd.DataFrame, cmp_d: pd.DataFrame) -> list[str]:
    """The headline table of one dataset; returns markdown lines incl. its footnotes."""
    ref = ctx.reference_method
    standin = ctx.standin(d)
    prim = order_rows(sd[sd.metric_family == "primary"], ref)
    rows, clipped, doubtful_used = [], False, set()
    for _, r in prim.iterrows():
        metric = r["metric"]
        arrow = "↑" if truthy(r["higher_is_better"]) else "↓"
        ci, clip = fmt_ci(r["ci95_low"], r["ci95_high"], r["mean"], metric)
        clipped |= clip
        if r["method"] == ref:
            delta, p_h, mdd, pdiff = "(reference)", "(reference)", "–", "–"
        else:
            delta, p_h, mdd, pdiff = _test_cells(_cmp_row(cmp_d, metric, r["method"]), r, d, standin,
                                                 doubtful_used)
        if (d, metric) in DOUBTFUL and math.isfinite(fnum(r.get("paper_mean"))):
            doubtful_used.add((d, metric))
        row = [_method_cell(ctx, d, r["method"]), f"{metric} {arrow}", ours(r), ci, _n(r)]
        if not standin:
            row.append(_paper(r, d))
        row += [_vs_trivial(r), delta, p_h, mdd]
        if not standin:
            row.append(pdiff)
        rows.append(row)
    headers = ["method", "metric", "ours (mean ± std)", "95% CI", "n"]
    if not standin:
        headers.append("paper (mean ± std)")
    headers += ["vs trivial", f"Δ vs {ref}", "p (Holm)", "detectable Δ (80% power, Holm level)"]
    if not standin:
        headers.append("paper Δ")
    lines = [md_table(headers, rows), ""]
    for nline in _primary_notes(ctx, d, prim, cmp_d, clipped, doubtful_used):
        lines += [nline, ""]
    return lines


def _test_cells(c, r, d: str, standin: bool, doubtful_used: set) -> tuple[str, str, str, str]:
    """(Δ vs the reference, p (Holm), detectable Δ, paper Δ) of a method's row, from its comparison
    row ``c`` (None: no comparison)."""
    delta = p_h = mdd = pdiff = "–"
    if c is None:
        return delta, p_h, mdd, pdiff
    metric = r["metric"]
    n_pairs = int(fnum(c["n"]) or 0)
    delta = fmt_diff(c["mean_diff"], c["mean_a"])
    if truthy(c.get("same_runs")):
        delta, p_h, mdd = "0 (same runs)", "same runs: no test", "–"
    elif n_pairs < stats.MIN_N_POWER:
        p_h = f"no power (n={n_pairs})"
        mdd = f"no power (n={n_pairs})"
    else:
        p_h = (fmt_p(c["p_holm"]) if math.isfinite(fnum(c["p_holm"]))
               else (text(c["note"]).split(";")[0] or "no test"))
        mdd = fmt_mdd(c["mdd80_holm"], r["mean"])
    if not standin:
        if (d, metric) in DOUBTFUL:
            if math.isfinite(fnum(r.get("paper_mean"))):
                pdiff = "† not comparable"
                doubtful_used.add((d, metric))
        else:
            pdiff = fmt_diff(c.get("paper_diff"), c["mean_a"])
    return delta, p_h, mdd, pdiff


def _primary_notes(ctx: ReportContext, d: str, prim: pd.DataFrame, cmp_d: pd.DataFrame, clipped: bool,
                   doubtful_used: set) -> list[str]:
    """The headline table's footnotes: power, clipped intervals, doubtful paper values, same runs."""
    standin = ctx.standin(d)
    max_n = int(cmp_d["n"].max()) if not cmp_d.empty and len(cmp_d) else 0
    notes = []
    if not cmp_d.empty and max_n < stats.MIN_N_POWER:
        if max_n == 2:
            why = (f"with n = 2 a paired t-test detects (80% power) only a difference of "
                   f"{stats.min_detectable_difference(2, 1.0):.1f} times the sd of the paired "
                   "differences")
        else:
            why = f"with n = {max_n} there is no test at all"
        notes.append(f"**No test has power here:** at most {max_n} paired seed(s) per "
                     f"comparison; {why}. The differences are descriptive only.")
    if clipped:
        notes.append("Marked *: interval clipped to the metric's valid range (the t-interval "
                     "of few seeds can reach past it).")
    for key in sorted(doubtful_used):
        notes.append(f"† {DOUBTFUL[key]} (docs/method.md section {DOUBTFUL_SECTION[key]}).")
    if d == "cifar10" and not standin:
        notes.append(f"Note: {RANDOM_VS_AUTONORM} (docs/method.md section 8.4).")
    pairs = sorted({(m, ctx.same_run_as(d, m)) for m in prim["method"] if ctx.same_run_as(d, m)})
    seen = set()
    for a, b in pairs:
        if frozenset((a, b)) in seen:
            continue
        seen.add(frozenset((a, b)))
        why = ("AutoNorm-S does not freeze here, so it is AutoNorm"
               if {a, b} == {"autonorm", "autonorm_s"} else
               "their run configs resolve to the same training")
        notes.append(f"{a} and {b} are the same training runs on this dataset ({why}): "
                     "identical rows, no test between them.")
    return notes


def secondary_table(sd: pd.DataFrame, ref: str, label=lambda m: m) -> list[str]:
    sec = order_rows(sd[sd.metric_family == "secondary"], ref)  # the main table's method order
    if sec.empty:
        return []
    mets = list(dict.fromkeys(sec["metric"]))
    rows = []
    for m in dict.fromkeys(sec["method"]):
        sm = sec[sec.method == m].set_index("metric")
        rows.append([label(m)] + [ours(sm.loc[x]) if x in sm.index else "–" for x in mets])
    arrows = [f"{x} {'↑' if stats.higher_is_better(x) else '↓'}" for x in mets]
    return ["Other test metrics (mean ± std over seeds):", "",
            md_table(["method"] + arrows, rows), ""]


def cost_table(ctx: ReportContext, d: str, sd: pd.DataFrame) -> list[str]:
    cost = sd[sd.metric_family == "cost"]
    if cost.empty:
        return []
    idx = cost.set_index(["method", "metric"])
    base_params = (fnum(idx.loc[("frozen_ln", "params"), "mean"])
                   if ("frozen_ln", "params") in idx.index else math.nan)
    base_flops = (fnum(idx.loc[("frozen_ln", "flops_per_sample"), "mean"])
                  if ("frozen_ln", "flops_per_sample") in idx.index else math.nan)
    rows = []
    has_latency = (cost.metric == "latency_ms_per_batch").any()
    for m in dict.fromkeys(cost["method"]):
        def get(metric, col="mean"):
            return idx.loc[(m, metric), col] if (m, metric) in idx.index else math.nan
        params, flops = fnum(get("params")), fnum(get("flops_per_sample"))
        over_p = (f"{100 * (params / base_params - 1):+.1f}%"
                  if math.isfinite(params) and math.isfinite(base_params) and base_params else "–")
        over_f = (f"{100 * (flops / base_flops - 1):+.2f}%"
                  if math.isfinite(flops) and math.isfinite(base_flops) and base_flops else "–")
        # the size is the row itself: the label says only what the method is
        row = [ctx.method_label(d, m, size=False), fmt_cost("params", params), over_p,
               fmt_cost("flops_per_sample", flops), over_f]
        if not math.isfinite(base_params):  # no static-LN run to compare with
            row = [row[0], row[1], row[3]]
        if has_latency:
            lat = fnum(get("latency_ms_per_batch"))
            lat_sd = fnum(get("latency_ms_per_batch", "std"))
            row.append(fmt_ms(lat, lat_sd) if math.isfinite(lat) else "–")
        rows.append(row)
    headers = (["method", "params", "vs frozen_ln", "FLOPs / sample", "vs frozen_ln"]
               if math.isfinite(base_params) else ["method", "params", "FLOPs / sample"])
    if has_latency:
        headers.append("latency ms / batch (mean ± sd; noisy, see Cost)")
    return ["Cost (mean over seeds):", "", md_table(headers, rows), ""]


def paired_detail(ctx: ReportContext, cmp_d: pd.DataFrame) -> list[str]:
    """All primary-family tests with t, p, d_z, Wilcoxon - only when some test has power."""
    if cmp_d.empty:
        return []
    cp = cmp_d[(cmp_d.holm_family == "primary") & ~cmp_d.get("same_runs", False).map(truthy)]
    cp = cp[cp["n"] >= stats.MIN_N_POWER]
    if cp.empty:
        return []
    rows = [[c.metric, f"{c.method_a} − {c.method_b}", int(c.n), fmt_diff(c.mean_diff, c.mean_a),
             fmt_mdd(c.sd_diff, c.mean_a) if "sd_diff" in cp else "–", fmt(c.t, 3), fmt_p(c.p),
             fmt_p(c.p_holm), fmt(c.cohens_dz, 2), fmt_p(c.wilcoxon_p), text(c.note)]
            for c in cp.itertuples(index=False)]
    m_holm = int(fnum(cp.holm_m.max()) or 0)
    return [f"Paired tests ({ctx.reference_method} − other, paired by seed; Holm over the "
            f"{m_holm} primary-metric tests of this dataset):", "",
            md_table(["metric", "difference", "n", "mean diff", "sd of diffs", "t", "p",
                      "p (Holm)", "d_z", "Wilcoxon p", "note"], rows), ""]


def dataset_section(ctx: ReportContext, d: str) -> str:
    summary, comparisons = ctx.summary, ctx.comparisons
    sd = summary[summary.dataset == d]
    lines = [f"### {ctx.label(d)}" + (" — no paper numbers" if ctx.standin(d) else ""), ""]
    meta = ctx.dataset_meta(d)
    facts = []
    if text(meta.get("description")):
        facts.append(text(meta.get("description")).rstrip(". "))
    bl = baseline_text(ctx, d)
    if bl:
        facts.append(f"trivial baseline: {bl}")
    if facts:
        lines += ["; ".join(facts) + ".", ""]
    if sd[sd.metric_family == "primary"].empty:
        lines.append("No primary metric was measured for this dataset.")
        return "\n".join(lines)
    cmp_d = comparisons[comparisons.dataset == d] if not comparisons.empty else comparisons
    lines += primary_table(ctx, d, sd, cmp_d)
    lines += secondary_table(sd, ctx.reference_method, lambda m: ctx.method_label(d, m))
    lines += cost_table(ctx, d, sd)
    lines += paired_detail(ctx, cmp_d)
    lines += learned_vs_random(ctx, d)
    return "\n".join(lines)


def learned_vs_random(ctx: ReportContext, d: str) -> list[str]:
    """Each learned gate minus the Random Selector on the primary metric (the paper's abstract:
    learned gates lose to random ones on stationary vision; docs/method.md section 8.4)."""
    lr = ctx.learned_vs_random
    if lr.empty:
        return []
    rows = []
    for c in lr[(lr.dataset == d) & (lr.holm_family == "primary")].itertuples(index=False):
        n = int(fnum(c.n) or 0)
        if n < stats.MIN_N_POWER:
            p = f"no power (n={n})"
        else:
            p = fmt_p(c.p_holm) if math.isfinite(fnum(c.p_holm)) else "no test"
        rows.append([f"{c.method_a} − random", f"{c.metric} {'↑' if stats.higher_is_better(c.metric) else '↓'}",
                     n, fmt_diff(c.mean_diff, c.mean_a), p])
    if not rows:
        return []
    return ["Learned gates against the Random Selector (the paper's abstract says the learned ones "
            "lose on stationary vision; paired by seed, each its own test):", "",
            md_table(["difference", "metric", "n", "mean diff", "p"], rows), ""]


def results_section(ctx: ReportContext) -> str:
    summary = ctx.summary
    if summary.empty:
        return "**No results: summary.csv is empty.**\n"
    main_ds = [d for d in dict.fromkeys(summary["dataset"])
               if not (summary[summary.dataset == d].metric_family == "robustness").all()]

    def family_of(d: str) -> str:
        f = ctx.ds_family.get(d) or summary.loc[summary.dataset == d, "family"].iloc[0]
        return f if f in FAMILIES else "other"

    parts = []
    for fam in FAMILIES + ("other",):
        ds = [d for d in main_ds if family_of(d) == fam]
        if not ds:
            continue
        parts += [f"## {fam.capitalize() if fam != 'nlp' else 'NLP'}", ""]
        for d in ds:
            parts += [dataset_section(ctx, d), ""]
    return "\n".join(parts)

