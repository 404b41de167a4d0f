"""Title, the stale-runs warning, the stand-in banner and how to read the report."""
from __future__ import annotations

from autonorm.report.context import ReportContext
from autonorm.report.fmt import md_table, text

BANNER = "SMOKE / stand-in data: these numbers are not comparable to the paper"
STALE_TITLE = "STALE RUNS EXCLUDED"


def title(ctx: ReportContext) -> str:
    return "# AutoNorm reproduction: results report\n"


def stale_warning(ctx: ReportContext) -> str:
    """Runs whose recorded config hash is not their folder's current one: loud, at the top."""
    runs = ctx.runs
    if runs.empty or "status" not in runs:
        return ""
    stale = runs[runs.status == "stale"]
    if stale.empty:
        return ""
    lines = [f"> **{STALE_TITLE}: {len(stale)} run(s) were evaluated under a config that is not "
             "their run folder's current `config.json`.** Their numbers belong to a config that "
             "no longer exists, so they are left out of every table, test and figure below. "
             "Rerun them (the pipeline reruns a run whose config changed) before reading the "
             "affected rows.", ""]
    lines.append(md_table(["dataset", "method", "seed", "recorded hash", "current hash", "path"],
                          [[r.dataset, r.method, r.seed, text(r.config_hash_recorded),
                            text(r.config_hash_current), r.path]
                           for r in stale.itertuples(index=False)]))
    return "\n".join(lines) + "\n"


def banner(ctx: ReportContext) -> str:
    standins = sorted(d for d, s in ctx.ds_standin.items() if s)
    if not standins:
        return ""
    return (f"> **{BANNER}.** Stand-in datasets in this run: {', '.join(standins)}. They are "
            "labelled as stand-ins wherever they appear and no paper number is set beside "
            "them.\n")


def how_to_read(ctx: ReportContext) -> str:
    ref = ctx.reference_method
    lines = [
        f"Preset: `{ctx.preset}`. Our results (mean ± std over seeds, 95% CI, n) beside the "
        f"paper's (AutoNorm, 2026), with paired tests of `{ref}` against every other method. "
        "↑ / ↓: higher / lower is better.",
        "",
        "How to read the tables:",
        "",
        f"- **Δ vs {ref}** is {ref} minus the row's method, paired by seed; **detectable Δ** is "
        "the smallest true difference a paired t-test at this n and this spread of the paired "
        "differences would find with 80% power at the level that test faces in Holm's "
        "procedure (α = 0.05 divided by the tests still in play): a smaller observed "
        "difference that is \"not significant\" says nothing either way. **paper Δ** is the "
        "same difference in the paper's table.",
        "- With fewer than 3 paired seeds no test has power: the tables then say so instead "
        "of printing p-values.",
        "- **vs trivial** compares the mean with the dataset's trivial baseline (majority "
        "class, most frequent tag, or the training-mean predictor); **not better** flags a "
        "method at or below it (or, for ↓ metrics, at or above it): it has learned nothing "
        "usable.",
        "- Intervals marked * were clipped to the metric's valid range (e.g. 0-100%).",
        "- The method, the metrics and the statistics are described in docs/method.md "
        "(sections 1-5); the paper's numbers that cannot be taken at face value in section 8.",
    ]
    return "\n".join(lines) + "\n"
