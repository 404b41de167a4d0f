"""The files the aggregate and figures steps write.

The workflow names them as rule outputs while Snakemake builds the DAG, so this module imports
nothing (analysis/aggregate.py and report/figures.py import pandas, scipy and matplotlib, which would add seconds
to every ``snakemake`` call, dry runs included).
"""

TABLE_NAMES = ["summary.csv", "comparisons.csv", "runs.csv", "gates.csv", "history.csv",
               "freeze.csv", "corruptions.csv", "datasets.csv", "baselines.csv", "ablations.csv",
               "learned_vs_random.csv"]

#: The per-study report's figures, the one list of them, in the report's order: stem -> the
#: function of autonorm.report.figures that draws it (``draw``, by name: this module imports
#: nothing), the tables it is drawn from, in the order of its arguments (``tables``), and its one-line
#: caption in the report (``caption``; workflow/report/<stem>.rst says the same at more length).
FIGURES = {
    "method_comparison": {
        "draw": "fig_method_comparison", "tables": ("summary.csv",),
        "caption": "Primary test metric per method and dataset: mean over seeds with its "
                   "95% t-interval (clipped to the metric's valid range), grouped by "
                   "family; the paper's value as a black cross where it is comparable."},
    "gate_entropy": {
        "draw": "fig_gate_entropy", "tables": ("history.csv", "freeze.csv"),
        "caption": "Mean gate entropy over epochs (line: seed mean, band: seed min-max), with "
                   "ln 2 (the maximum), eps_H and each freeze epoch marked."},
    "wdyt_heatmap": {
        "draw": "fig_wdyt_heatmap", "tables": ("gates.csv",),
        "caption": "w_DyT per selector (rows) and dataset x method (columns) at the end of "
                   "training, seed mean; 1 = DyT, 0 = LN."},
    "metric_vs_entropy": {
        "draw": "fig_metric_vs_entropy", "tables": ("history.csv",),
        "caption": "Validation metric against mean gate entropy, one point per epoch "
                   "(seed mean); the arrow on the y axis points to better."},
    "corruptions": {
        "draw": "fig_corruptions", "tables": ("corruptions.csv",),
        "caption": "Accuracy per corruption at severity 3 (bars: seed mean, whiskers: sd) and "
                   "mean accuracy against severity."},
}
FIGURE_STEMS = list(FIGURES)
FIGURE_FORMATS = ["png", "pdf"]
#: every file written by figures.make_figures, relative to its ``--out-dir``
FIGURE_NAMES = [f"{s}.{e}" for s in FIGURE_STEMS for e in FIGURE_FORMATS]


def ablation_figure_stem(axis: str) -> str:
    """File stem of one ablation axis' figure (``ablation_<axis>``; written only when ablations
    exist, so not in FIGURE_NAMES): drawn by report/ablation_figures.py, linked by the report."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(axis))
    return f"ablation_{safe}"
