"""The report's scorecard (report.scorecard): per dataset, each method's test metric, the paper's mean ± SD
beside ours where the paper's numbers apply, ours alone on a stand-in dataset (the smoke preset's)."""
from __future__ import annotations

from autonorm.report import scorecard
from autonorm.report.context import ReportContext


def scorecard_section(ctx: ReportContext) -> str:
    s = ctx.summary
    if s.empty:
        return ""
    cards = [c for d in dict.fromkeys(s.dataset) if (c := scorecard.card(s, d)) is not None]
    if not cards:
        return ""
    head = ("## Scorecard\n\nEach method's test metric per dataset: the paper's mean ± SD over its 5 seeds beside "
            "ours (mean ± SD, 95% CI, n) where the paper's numbers apply, and each method's difference from "
            "frozen_ln (differences of the means; the paired tests follow below). A stand-in dataset shows ours "
            "alone.\n")
    return head + "\n" + "\n\n".join(scorecard.card_table(c) for c in cards) + "\n"
