"""Cost: the selectors' parameter and FLOP overhead beside the paper's claim, and why
latency is not a result."""
from __future__ import annotations

import math

from autonorm.report.context import ReportContext
from autonorm.report.fmt import fnum, md_table
from autonorm.report.paper import PARAM_OVERHEAD_CLAIM
from autonorm.report.sections.results import LATENCY_CAVEAT


def cost_section(ctx: ReportContext) -> str:
    """The selector overhead over all datasets beside the paper's claim, and the latency caveat."""
    s = ctx.summary
    if s.empty:
        return ""
    cost = s[(s.metric_family == "cost") & (s.dataset == s.source_dataset)]
    if cost.empty:
        return ""
    rows = []
    for d in dict.fromkeys(cost["dataset"]):
        idx = cost[cost.dataset == d].set_index(["method", "metric"])["mean"]
        from autonorm import methods  # at call time: a method registered later (a recipe) is included

        for m in methods.GATED_METHODS:
            cells = []
            for metric in ("params", "flops_per_sample"):
                a, b = idx.get((m, metric)), idx.get(("frozen_ln", metric))
                ok = a is not None and b is not None and math.isfinite(fnum(a)) and fnum(b)
                cells.append(f"{100 * (fnum(a) / fnum(b) - 1):+.2f}%" if ok else None)
            if any(cells):
                rows.append([ctx.label(d), m] + [c or "–" for c in cells])
    lines = ["## Cost", ""]
    if rows:
        lines += ["Selector overhead against the same backbone with static LN (frozen_ln), mean "
                  "over seeds:", "", md_table(["dataset", "method", "params", "FLOPs / sample"],
                                             rows), "",
                  f"Beside the paper: {PARAM_OVERHEAD_CLAIM} (docs/method.md section 8.1). Compare "
                  "the params column with \"<1%\", not with each other.", ""]
    if (cost.metric == "latency_ms_per_batch").any():
        lines += [LATENCY_CAVEAT, ""]
    return "\n".join(lines)
