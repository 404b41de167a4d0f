"""Title, the stale-runs warning, the stand-in banner and how to read the report."""
from __future__ import annotations

from autonorm.analysis import stats
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


def _max_pairs(ctx: ReportContext) -> int:
    """The most seeds any comparison of this run pairs (0 without comparisons)."""
    comp = ctx.comparisons
    if comp.empty or "n" not in comp:
        return 0
    n = comp["n"].max()
    return int(n) if n == n else 0


def _all_standin(ctx: ReportContext) -> bool:
    s = ctx.summary
    datasets = set(s.dataset) if not s.empty and "dataset" in s else set()
    return bool(datasets) and all(ctx.standin(d) for d in datasets)


def opening(ctx: ReportContext) -> str:
    """The report's first sentence, promising only what this run's datasets and seeds give."""
    ref = ctx.reference_method
    beside = ("on stand-in data only, so no paper number is set beside them"
              if _all_standin(ctx) else "beside the paper's (AutoNorm, 2026) on the paper's datasets")
    n = _max_pairs(ctx)
    if n >= stats.MIN_N_POWER:
        tests = f"with paired tests of `{ref}` against every other method"
    elif n > 0:
        tests = (f"with `{ref}` paired by seed against every other method; at most {n} paired "
                 f"seed{'s' if n != 1 else ''}, so no test is run and every difference is descriptive")
    else:
        tests = "with no paired comparison (no two methods share a seed)"
    return (f"Preset: `{ctx.preset}`. Our results (mean ± std over seeds, 95% CI, n) {beside}, "
            f"{tests}. ↑ / ↓: higher / lower is better.")


def how_to_read(ctx: ReportContext) -> str:
    ref = ctx.reference_method
    paper_delta = ("" if _all_standin(ctx) else
                   " **paper Δ** is the same difference in the paper's table.")
    lines = [
        opening(ctx),
        "",
        "How to read the tables:",
        "",
        f"- **Δ vs {ref}** is {ref} minus the row's method, paired by seed; **detectable Δ** is "
        "the smallest true difference a paired t-test at this n and this spread of the paired "
        "differences would find with 80% power at the level that test faces in Holm's "
        "procedure (α = 0.05 divided by the tests still in play): a smaller observed "
        "difference that is \"not significant\" says nothing either way." + paper_delta,
        "- With fewer than 3 paired seeds no test has power: the tables then say so instead "
        "of printing p-values.",
        "- **(tie)**: a difference of exactly zero at the printed precision, or seeds that all "
        "scored the same (± 0 over seeds): accuracy moves in steps of one test example, so two "
        "different models can score alike; a tie at a few seeds says nothing about a difference.",
        "- **vs trivial** compares the mean with the dataset's trivial baseline (majority "
        "class, most frequent tag, or the training-mean predictor); **not better** flags a "
        "method at or below it (or, for ↓ metrics, at or above it): it has learned nothing "
        "usable.",
        "- A method that is not a transformer (the Teacher MLP) says so, with its size, wherever "
        "it is compared with the transformers.",
        "- Intervals marked * were clipped to the metric's valid range (e.g. 0-100%).",
        "- The method, the metrics and the statistics are described in docs/method.md "
        "(sections 1-5); the paper's numbers that cannot be taken at face value in section 8.",
    ]
    return "\n".join(lines) + "\n"
