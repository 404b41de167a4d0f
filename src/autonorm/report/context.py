"""Everything a report section may read, loaded once."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from autonorm.io_utils import read_table
from autonorm.methods import METHODS
from autonorm.report.fmt import human_count, pretty, text, truthy
from autonorm.report.paper import STANDIN_LABEL

DEFAULT_REFERENCE_METHOD = "autonorm_s"
FAMILIES = ("vision", "nlp", "tabular")
TABLE_FILES = ("summary", "comparisons", "runs", "gates", "history", "freeze", "corruptions",
               "datasets", "baselines", "ablations", "learned_vs_random")


def _mask(df: pd.DataFrame, equal: dict) -> np.ndarray:
    mask = np.ones(len(df), dtype=bool)
    for col, value in equal.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return np.zeros(len(df), dtype=bool)  # as pandas: nothing equals a missing value (numpy: None == None)
        mask &= df[col].to_numpy() == value
    return mask


def rows_where(df: pd.DataFrame, **equal) -> pd.DataFrame:
    """The rows of ``df`` whose columns equal the given values (``rows_where(s, dataset="mnist",
    method="frozen_ln")``), as ``df[(df.dataset == "mnist") & ...]`` selects them (a missing cell equals
    nothing), compared on the columns' arrays: the page looks numbers up thousands of times."""
    return df[_mask(df, equal)]


def column_where(df: pd.DataFrame, column: str, **equal) -> np.ndarray:
    """The values of one ``column`` on the rows :func:`rows_where` selects, in order: selecting a whole
    frame of mixed columns costs ten times the comparisons, and a lookup needs one number."""
    return df[column].to_numpy()[_mask(df, equal)]


def _with_columns(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Add the columns a tables folder from an older aggregate lacks (as empty cells), so
    the sections read one schema; an empty table stays empty."""
    from autonorm.analysis import tables

    cols = {"summary": tables.SUMMARY_COLUMNS, "comparisons": tables.COMPARISON_COLUMNS,
            "runs": tables.RUNS_COLUMNS}.get(name)
    if cols is None or df.empty:
        return df
    for c in cols:
        if c not in df:
            df[c] = float("nan")
    return df


@dataclass
class ReportContext:
    """The aggregate tables plus the report's inputs.

    ``t`` maps a table stem ('summary', 'runs', ...) to its DataFrame (empty
    when the csv is absent, so an older tables folder still renders).
    """
    t: dict[str, pd.DataFrame]
    out: Path
    figures_dir: Path | None = None
    config_json: str | None = None
    provenance_from: Path | None = None
    config: dict = field(default_factory=dict)
    reference_method: str = DEFAULT_REFERENCE_METHOD
    ds_standin: dict[str, bool] = field(default_factory=dict)
    ds_family: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, tables: str | Path, out: str | Path, figures_dir: str | Path | None = None,
             config_json: str | None = None,
             provenance_from: str | Path | None = None) -> "ReportContext":
        t = {name: _with_columns(name, read_table(tables, f"{name}.csv")) for name in TABLE_FILES}
        cfg: dict = {}
        if config_json:
            try:
                loaded = json.loads(config_json)
                cfg = loaded if isinstance(loaded, dict) else {}
            except ValueError:
                cfg = {}
        ctx = cls(t=t, out=Path(out), figures_dir=Path(figures_dir) if figures_dir else None,
                  config_json=config_json,
                  provenance_from=Path(provenance_from) if provenance_from else None, config=cfg)
        comp = t["comparisons"]
        # the compared-against method is whatever autonorm-aggregate used (--reference-method)
        if not comp.empty and "method_a" in comp:
            ctx.reference_method = str(comp["method_a"].iloc[0])
        elif cfg.get("reference_method"):
            ctx.reference_method = str(cfg["reference_method"])
        for name in ("runs", "summary", "datasets"):
            df = t[name]
            if df.empty or "standin" not in df:
                continue
            # keyed by the reported dataset name: a generated CIFAR-10-C marks 'cifar10c'
            # as a stand-in, not cifar10 itself
            for r in df.itertuples(index=False):
                d = r.dataset
                ctx.ds_standin[d] = ctx.ds_standin.get(d, False) or truthy(r.standin)
                fam = getattr(r, "family", None)
                if isinstance(fam, str):
                    ctx.ds_family.setdefault(d, fam)
        return ctx

    # ------------------------------------------------------------------ helpers
    def __getattr__(self, name: str) -> pd.DataFrame:
        # ctx.summary, ctx.runs, ...: the tables by stem
        t = self.__dict__.get("t")
        if t is not None and name in t:
            return t[name]
        raise AttributeError(name)

    @property
    def preset(self) -> str:
        return str(self.config.get("preset", "unknown")) if self.config else "unknown"

    def standin(self, d: str) -> bool:
        return bool(self.ds_standin.get(d, False))

    def label(self, d: str) -> str:
        """How a dataset is named everywhere in the report (one form per dataset)."""
        if self.standin(d):
            tgt = STANDIN_LABEL.get(d)
            return f"{d} (stand-in{' for ' + tgt if tgt else ''})"
        return pretty(d)

    def dataset_meta(self, d: str) -> dict:
        df = self.datasets
        if df.empty:
            return {}
        r = rows_where(df, dataset=d)
        return r.iloc[0].to_dict() if len(r) else {}

    def same_run_as(self, d: str, m: str) -> str:
        """The main-table method (not an ablation variant) that is the same training as ``m``."""
        runs = self.runs
        if runs.empty or "same_run_as" not in runs:
            return ""
        main = set(self.summary["method"]) if not self.summary.empty else set()
        r = rows_where(runs, dataset=d, method=m)
        vals = [text(v) for v in r["same_run_as"] if text(v) and text(v) in main]
        if vals:
            return vals[0]
        back = runs[(runs.dataset == d) & (runs.same_run_as == m) & runs.method.isin(main)]
        return str(back["method"].iloc[0]) if len(back) else ""

    def method_label(self, d: str, m: str, size: bool = True) -> str:
        """How a method is named where it is compared with others: one that is not a transformer
        (the Teacher MLP) says what it is and its size, so that "best of ours" or a row above
        AutoNorm-S is not read as a transformer of the same size."""
        meth = METHODS.get(m)
        if meth is None or meth.backbone == "transformer":
            return m
        s = self.summary
        n = math.nan
        if not s.empty and {"metric", "dataset", "method", "mean"} <= set(s.columns):
            p = column_where(s, "mean", dataset=d, method=m, metric="params")
            n = float(p[0]) if len(p) else math.nan
        said = f", {human_count(n)} parameters" if size and math.isfinite(n) else ""
        return f"{m} (a plain {meth.backbone.upper()}{said}; not a transformer)"

    def model_sizes(self) -> dict[str, str]:
        """family -> 'depth D, width W' of this config (for 'smaller than the paper')."""
        out = {}
        fams = self.config.get("families") if isinstance(self.config, dict) else None
        if not isinstance(fams, dict):
            return out
        for fam, block in fams.items():
            model = block.get("model") if isinstance(block, dict) else None
            if isinstance(model, dict):
                out[fam] = (f"{model.get('depth', '?')} layers, width {model.get('dim', '?')}, "
                            f"{model.get('heads', '?')} heads")
        return out

    def epochs_of(self, fam: str) -> float:
        fams = self.config.get("families") if isinstance(self.config, dict) else None
        try:
            return float(fams[fam]["train"]["epochs"])
        except (KeyError, TypeError, ValueError):
            return math.nan
