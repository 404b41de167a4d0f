"""Fixtures shared by the test modules; the builders they use are in tests/helpers/.

``paper_results``: the paper-shaped results folder (tests/helpers/paper_results.py: 9 datasets x
8 methods x 3 seeds, variants, one stale run) with its tables, built and aggregated once per
session (it takes most of a minute). It is shared, so it is read-only: a test that writes into
a results folder copies it first (``shutil.copytree``); the session ends in an error naming the
files if a test changed it.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from autonorm.output_names import TABLE_NAMES
from helpers.paper_results import build_paper_results, run_paper_aggregate


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def paper_results(tmp_path_factory) -> Path:
    """The paper-shaped results folder with its tables/ (read-only: copy it to write into it)."""
    root = build_paper_results(tmp_path_factory.mktemp("paper") / "results")
    run_paper_aggregate(root)
    before = _snapshot(root)
    yield root
    after = _snapshot(root)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"a test changed the shared paper_results folder {root}: {changed[:10]}"


@pytest.fixture(scope="module")
def paper_tables(paper_results) -> dict[str, pd.DataFrame]:
    """The paper-shaped folder's tables (``TABLE_NAMES``), read afresh for each module."""
    return {n: pd.read_csv(paper_results / "tables" / n) for n in TABLE_NAMES}

