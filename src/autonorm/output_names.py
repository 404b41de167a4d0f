"""The files the aggregate and figures steps write.

The workflow names them as rule outputs while Snakemake builds the DAG, so this module imports
nothing (analysis/aggregate.py and report/figures.py import pandas, scipy and matplotlib, which would add seconds
to every ``snakemake`` call, dry runs included).
"""

TABLE_NAMES = ["summary.csv", "comparisons.csv", "runs.csv", "gates.csv", "history.csv",
               "freeze.csv", "corruptions.csv", "datasets.csv", "baselines.csv", "ablations.csv",
               "learned_vs_random.csv"]

FIGURE_STEMS = ["method_comparison", "gate_entropy", "wdyt_heatmap", "metric_vs_entropy",
                "corruptions"]
FIGURE_FORMATS = ["png", "pdf"]
#: every file written by figures.make_figures, relative to its ``--out-dir``
FIGURE_NAMES = [f"{s}.{e}" for s in FIGURE_STEMS for e in FIGURE_FORMATS]
