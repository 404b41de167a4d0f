"""Which runs are one training: the one place that answers "is this run the same training as that one".

A seed of a method can be read through another method's run: a grid entry whose resolved config is
another's (``same_run_as``: AutoNorm-S where freezing is disabled, a default-valued variant), or an
AutoNorm-S run whose freeze did not fire, read as that seed's unfrozen AutoNorm
(analysis.summaries.alias_unfired_freeze). Every such reading points the runs table's ``path`` at the run
it reads, so two (dataset, method, seed) entries are one training exactly when their finished rows name
one run folder. A paired difference between them is zero by construction and measures nothing: the page
leaves such seeds out of any comparison that would read them as two trainings.
"""
from __future__ import annotations

import pandas as pd


def run_folder(runs: pd.DataFrame, d: str, method: str, seed: int) -> str | None:
    """The run folder a finished (dataset, method, seed) reads; None where it has no finished run."""
    if runs is None or runs.empty or "path" not in runs:
        return None
    hit = runs[(runs.dataset == d) & (runs.method == method) & (runs.seed.astype(int) == int(seed))
               & (runs.status == "ok")]
    return str(hit.path.iloc[0]) if len(hit) and isinstance(hit.path.iloc[0], str) else None


def one_training(runs: pd.DataFrame, d: str, a: str, b: str, seed: int) -> bool:
    """Whether method ``a`` and method ``b`` on dataset ``d`` at ``seed`` are one training (one run folder)."""
    fa, fb = run_folder(runs, d, a, seed), run_folder(runs, d, b, seed)
    return fa is not None and fa == fb


def seeds(runs: pd.DataFrame, d: str, a: str, b: str) -> tuple[list[int], list[int]]:
    """(the seeds at which ``a`` and ``b`` are one training, those at which both finished as two)."""
    if runs is None or runs.empty:
        return [], []
    ok = runs[(runs.dataset == d) & (runs.status == "ok")]
    both = sorted(set(ok[ok.method == a].seed.astype(int)) & set(ok[ok.method == b].seed.astype(int)))
    one = [s for s in both if one_training(runs, d, a, b, s)]
    return one, [s for s in both if s not in one]
