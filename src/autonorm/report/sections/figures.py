"""Links to the figures, each with its caption (``output_names.FIGURES``; the Snakemake HTML report shows
the same at more length, workflow/report/<stem>.rst)."""
from __future__ import annotations

import os
from pathlib import Path

from autonorm.output_names import FIGURES
from autonorm.report.context import ReportContext


def figures_section(ctx: ReportContext) -> str:
    lines = ["## Figures", ""]
    if ctx.figures_dir is None:
        return "\n".join(lines + ["No figures folder given.", ""])
    rel = os.path.relpath(Path(ctx.figures_dir).resolve(), ctx.out.resolve().parent)
    for stem, spec in FIGURES.items():
        png = Path(ctx.figures_dir) / f"{stem}.png"
        link = Path(rel, f"{stem}.png").as_posix()
        lines += [f"### {stem}", "", spec["caption"], ""]
        if png.is_file():
            lines.append(f"![{stem}]({link})  ([PDF]({Path(rel, stem + '.pdf').as_posix()}))")
        else:
            lines.append(f"(figure file {link} not found)")
        lines.append("")
    return "\n".join(lines)
