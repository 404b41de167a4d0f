"""Links to the figures, each with the caption the Snakemake HTML report also shows."""
from __future__ import annotations

import os
from pathlib import Path

from autonorm.output_names import FIGURE_STEMS
from autonorm.report.context import ReportContext

#: one line per figure; workflow/report/<stem>.rst says the same at more length
CAPTIONS = {
    "method_comparison": "Primary test metric per method and dataset: mean over seeds with its "
                         "95% t-interval (clipped to the metric's valid range), grouped by "
                         "family; the paper's value as a black cross where it is comparable.",
    "gate_entropy": "Mean gate entropy over epochs (line: seed mean, band: seed min-max), with "
                    "ln 2 (the maximum), eps_H and each freeze epoch marked.",
    "wdyt_heatmap": "w_DyT per selector (rows) and dataset x method (columns) at the end of "
                    "training, seed mean; 1 = DyT, 0 = LN.",
    "metric_vs_entropy": "Validation metric against mean gate entropy, one point per epoch "
                         "(seed mean); the arrow on the y axis points to better.",
    "corruptions": "Accuracy per corruption at severity 3 (bars: seed mean, whiskers: sd) and "
                   "mean accuracy against severity.",
}


def figures_section(ctx: ReportContext) -> str:
    lines = ["## Figures", ""]
    if ctx.figures_dir is None:
        return "\n".join(lines + ["No figures folder given.", ""])
    rel = os.path.relpath(Path(ctx.figures_dir).resolve(), ctx.out.resolve().parent)
    for stem in FIGURE_STEMS:
        png = Path(ctx.figures_dir) / f"{stem}.png"
        link = Path(rel, f"{stem}.png").as_posix()
        lines += [f"### {stem}", "", CAPTIONS.get(stem, ""), ""]
        if png.is_file():
            lines.append(f"![{stem}]({link})  ([PDF]({Path(rel, stem + '.pdf').as_posix()}))")
        else:
            lines.append(f"(figure file {link} not found)")
        lines.append("")
    return "\n".join(lines)
