"""Ablations: one table (and one figure, when drawn) per axis, beside the paper's statement
(docs/method.md section 7)."""
from __future__ import annotations

import math
import os
from pathlib import Path

from autonorm.analysis import stats
from autonorm.output_names import ablation_figure_stem
from autonorm.report.context import ReportContext
from autonorm.report.fmt import (fmt_ci, fmt_diff, fmt_ms, fmt_p, fnum, md_table, text,
                                 truthy)
from autonorm.report.paper import ablation_claim
from autonorm.report.sections.results import fmt_mdd


def _value(v) -> str:
    s = text(v)
    return s if s else "–"


def ablations_section(ctx: ReportContext) -> str:
    ab = ctx.ablations
    lines = ["## Ablations", ""]
    if ab.empty:
        return "\n".join(lines + [
            "No ablation variant was run (variants are declared in the config; "
            "docs/method.md section 7 lists the paper's ablations).", ""])
    lines += ["Each variant is its base method with one setting changed, trained with the same "
              "seeds; Δ is variant − base paired by seed, Holm over the variants of one axis, "
              "dataset and metric.", ""]
    for axis in dict.fromkeys(ab["axis"]):
        title, claim = ablation_claim(axis)
        lines += [f"### {title} (axis `{axis}`)", "",
                  f"The paper (docs/method.md section 7): {claim}", ""]
        aa = ab[ab.axis == axis]
        for (d, metric), g in aa.groupby(["dataset", "metric"], sort=False):
            arrow = "↑" if stats.higher_is_better(metric) else "↓"
            rows, clipped = [], False
            for r in g.to_dict("records"):
                ci, clip = fmt_ci(r["ci_low"], r["ci_high"], r["mean"], metric)
                clipped |= clip
                n_pairs = int(fnum(r["n_pairs"])) if math.isfinite(fnum(r["n_pairs"])) else 0
                if truthy(r["is_base"]):
                    delta = p = mdd = "(base)"
                elif n_pairs < stats.MIN_N_POWER:
                    delta = fmt_diff(r["mean_diff_vs_base"], r["mean"])
                    p = mdd = f"no power (n={n_pairs})"
                else:
                    delta = fmt_diff(r["mean_diff_vs_base"], r["mean"])
                    p = (f"{fmt_p(r['p_vs_base'])} ({fmt_p(r['p_vs_base_holm'])})"
                         if math.isfinite(fnum(r["p_vs_base"])) else "–")
                    mdd = fmt_mdd(r["mdd80_holm"], r["mean"])
                value = _value(r["value"])
                if truthy(r["is_base"]) and value == "–":
                    value = "(base setting)"
                rows.append([r["variant"], value, int(fnum(r["n"]) or 0),
                             fmt_ms(r["mean"], r["std"], r["n"]) if fnum(r["n"]) else "no result", ci,
                             delta, p, mdd, text(r["note"])])
            if metric in stats.CONVERGENCE_METRICS:
                lines += [f"{ctx.label(d)}, speed of convergence: `{metric}` is the first epoch at "
                          "which a run's validation metric reaches 99% of its final value (for an "
                          "error: within 1/0.99 of it), per seed, so the claim about convergence "
                          "is tested on the learning curves, not on the final metric.", ""]
            lines += [f"{ctx.label(d)}, {metric} {arrow}:", "",
                      md_table(["variant", f"{axis}", "n", "mean ± std", "95% CI",
                                "Δ vs base", "p, raw (Holm)", "detectable Δ (80% power, Holm level)", "note"],
                               rows), ""]
            if clipped:
                lines += ["Marked *: interval clipped to the metric's valid range.", ""]
        lines += _figure_link(ctx, axis)
    return "\n".join(lines)


def _figure_link(ctx: ReportContext, axis: str) -> list[str]:
    if ctx.figures_dir is None:
        return []
    stem = ablation_figure_stem(axis)
    png = Path(ctx.figures_dir) / f"{stem}.png"
    rel = os.path.relpath(Path(ctx.figures_dir).resolve(), ctx.out.resolve().parent)
    if not png.is_file():
        return [f"(figure {Path(rel, stem + '.png').as_posix()} not drawn)", ""]
    return [f"![{stem}]({Path(rel, stem + '.png').as_posix()})", ""]
