"""The report's sections, in order.

Each section is one function ``(ReportContext) -> str`` (markdown; '' to
leave the section out).  Adding a section means writing its function in a
module here and adding it to :data:`SECTIONS`: nothing else changes.
"""
from __future__ import annotations

from typing import Callable

from autonorm.report.context import ReportContext
from autonorm.report.sections.ablations import ablations_section
from autonorm.report.sections.datasets import datasets_section
from autonorm.report.sections.figures import figures_section
from autonorm.report.sections.header import banner, how_to_read, stale_warning, title
from autonorm.report.sections.mechanism import mechanism_section
from autonorm.report.sections.provenance import provenance_section, stats_notes
from autonorm.report.sections.cost import cost_section
from autonorm.report.sections.glance import glance_section
from autonorm.report.sections.results import results_section
from autonorm.report.sections.robustness import robustness_section
from autonorm.report.sections.runs import freeze_section, runs_section
from autonorm.report.sections.scorecard import scorecard_section

Section = Callable[[ReportContext], str]

SECTIONS: list[tuple[str, Section]] = [
    ("title", title),
    ("stale_warning", stale_warning),
    ("banner", banner),
    ("how_to_read", how_to_read),
    ("scorecard", scorecard_section),
    ("glance", glance_section),
    ("datasets", datasets_section),
    ("results", results_section),
    ("cost", cost_section),
    ("robustness", robustness_section),
    ("ablations", ablations_section),
    ("mechanism", mechanism_section),
    ("freeze", freeze_section),
    ("runs", runs_section),
    ("figures", figures_section),
    ("statistics", stats_notes),
    ("provenance", provenance_section),
]
