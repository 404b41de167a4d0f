"""Time limits of the tests' subprocesses (Snakemake runs).

Why: a fixed limit fails a slow or loaded machine for want of a longer wait (a 2-core laptop
busy with a study took 44 minutes where a quiet one takes 5). By default the tests wait as long
as the run takes; CI sets ``AUTONORM_TEST_TIMEOUT_FACTOR`` (a multiple of each call's quiet-machine
budget) to bound a hang.
"""
from __future__ import annotations

import os


def limit(quiet_seconds: float) -> float | None:
    """``quiet_seconds`` x $AUTONORM_TEST_TIMEOUT_FACTOR, or None (no limit) when it is unset."""
    factor = os.environ.get("AUTONORM_TEST_TIMEOUT_FACTOR")
    return float(factor) * quiet_seconds if factor else None
