"""Reading the aggregate step's tables in a test."""
from __future__ import annotations

import pandas as pd


def one_row(df: pd.DataFrame, **kw):
    """The one row of ``df`` whose columns equal ``kw`` (fails unless exactly one matches)."""
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (kw, sel)
    return sel.iloc[0]
