"""The ablation table: each variant beside its base method, paired by seed, Holm over the
variants of one axis; convergence axes also on the learning curves."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from autonorm.analysis import stats

from autonorm.analysis.collect import num, read_json_or_none
from autonorm.analysis.summaries import same_run_pairs, same_runs_between
from autonorm.analysis.tables import ABLATION_COLUMNS

def _axis_value_in_config(cfg: Any, axis: str) -> Any:
    """The value of ``axis`` (a dotted path, or a key name searched recursively) in a config."""
    if not isinstance(cfg, dict) or not axis:
        return None
    node: Any = cfg
    for part in str(axis).split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            node = None
            break
    if node is not None and not isinstance(node, dict):
        return node
    leaf = str(axis).split(".")[-1]
    stack = [cfg]
    while stack:
        cur = stack.pop()
        for k, v in cur.items():
            if k == leaf and not isinstance(v, dict):
                return v
            if isinstance(v, dict):
                stack.append(v)
    return None


def _value_key(v: Any) -> tuple:
    """Sort swept values numerically when they are numbers, else as text."""
    x = num(v)
    return (0, x, "") if math.isfinite(x) else (1, math.inf, str(v))


#: ablation axes (by name: config.variants.VARIANT_AXES) whose paper claim is about the speed of
#: convergence (hard Gumbel "converges significantly slower"): they are also tested on the learning curves
CONVERGENCE_AXES = ("gumbel",)


def convergence_values(history: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """Per run of ``methods``: epochs to reach 99% of its final validation metric (metric
    ``epochs_to_99pct``) and the mean of its validation curve over epochs (``val_curve_mean``, negated
    where the validation metric is lower-is-better: larger is sooner), as rows of the values table."""
    cols = ["dataset", "source_dataset", "method", "seed", "metric", "value", "standin"]
    if history is None or history.empty:
        return pd.DataFrame([], columns=cols)
    h = history[history.method.isin(list(methods))]
    rows = []
    for (d, m, s), g in h.groupby(["dataset", "method", "seed"], sort=False):
        name = next((str(x) for x in g["val_metric_name"] if isinstance(x, str)), "")
        curve = list(zip(g["epoch"], g["val_metric"]))
        rows.append({"dataset": d, "source_dataset": d, "method": m, "seed": int(s),
                     "metric": "epochs_to_99pct",
                     "value": stats.epochs_to_fraction(curve, stats.higher_is_better(name)),
                     "standin": False})
        area = stats.curve_mean(curve, stats.higher_is_better(name))
        if math.isfinite(area):
            rows.append({"dataset": d, "source_dataset": d, "method": m, "seed": int(s),
                         "metric": "val_curve_mean", "value": area, "standin": False})
    return pd.DataFrame(rows, columns=cols)


def ablation_table(values: pd.DataFrame, runs: pd.DataFrame, variants: dict[str, dict],
                   results: str | Path | None = None,
                   history: pd.DataFrame | None = None,
                   configs: dict | None = None) -> pd.DataFrame:
    """Each variant beside its base method: per dataset x axis x primary metric.

    Rows: every base method of the axis that has results (``is_base`` true; its
    value on the axis from the variants' ``base_value`` or the base run's
    config.json), then every variant in order of its swept value, with n, mean,
    std, 95% t-CI and a paired test (by seed) against its base; Holm over the
    variants of one dataset x axis x metric.  A variant whose base has no run on
    the dataset (the 3-way gate's base AutoNorm-3 when only AutoNorm ran) is
    tested against the axis' base that has runs, and the note says so.  A
    variant that is the same training as its reference gets no test.
    """
    rows: list[dict] = []
    if not variants or values.empty:
        return pd.DataFrame(rows, columns=ABLATION_COLUMNS)
    groups = same_run_pairs(runs)
    vals = values[values.dataset == values.source_dataset]
    by_axis: dict[str, list[str]] = {}
    for name, info in variants.items():
        by_axis.setdefault(str(info.get("axis", "unknown")), []).append(name)
    for axis, names in by_axis.items():
        names = sorted(names, key=lambda n: _value_key(variants[n].get("value")))
        bases = list(dict.fromkeys(str(variants[n].get("base", "")) for n in names))
        for d in dict.fromkeys(vals.loc[vals.method.isin(names), "dataset"]):
            gd = vals[vals.dataset == d]
            standin = bool(gd["standin"].any())
            base_value = {b: _base_value(b, d, axis, names, variants, runs, groups, results, configs)
                          for b in bases}
            metrics = [m for m in dict.fromkeys(gd.loc[gd.method.isin(names), "metric"])
                       if stats.metric_family(m) == "primary"]
            if axis in CONVERGENCE_AXES:
                conv = convergence_values(history, names + bases)
                conv = conv[conv.dataset == d].assign(standin=standin)
                if len(conv):
                    gd = pd.concat([gd, conv], ignore_index=True)
                    metrics += list(stats.CONVERGENCE_METRICS)
            where = {"dataset": d, "axis": axis, "standin": standin}
            for metric in metrics:
                rows.extend(_metric_block(gd, metric, where, names, bases, variants, base_value, groups))
    return pd.DataFrame(rows, columns=ABLATION_COLUMNS)


def _base_value(b: str, d: str, axis: str, names: list[str], variants: dict[str, dict], runs: pd.DataFrame,
                groups: Any, results: str | Path | None, configs: dict | None) -> Any:
    """The base method's value on the axis: the variants' ``base_value``, else its runs' config,
    else the value of a variant that is the base's own runs."""
    bv = next((variants[n].get("base_value") for n in names
               if variants[n].get("base") == b
               and variants[n].get("base_value") is not None), None)
    if bv is None and (results is not None or configs is not None):
        brun = runs[(runs.dataset == d) & (runs.method == b) & (runs.status == "ok")]
        for path, seed in zip(brun["path"], brun["seed"]):
            # a results folder's run config, or a study record's (analysis.records)
            cfg = (configs.get(f"{d}/{b}/seed{int(seed)}") if configs is not None
                   else read_json_or_none(Path(path) / "config.json"))
            bv = _axis_value_in_config(cfg, axis)
            if bv is not None:
                break
    if bv is None:
        # a variant that is the base's own runs carries the base's value (gate_2)
        bv = next((variants[n].get("value") for n in names
                   if same_runs_between(groups, d, n, b)), None)
    return bv


def _metric_block(gd: pd.DataFrame, metric: str, where: dict, names: list[str], bases: list[str],
                  variants: dict[str, dict], base_value: dict, groups: Any) -> list[dict]:
    """The rows of one dataset x axis x metric: its bases, then its variants, each tested against
    its base (Holm over the variants)."""
    gm = gd[gd.metric == metric]

    def seeds_of(m):
        sel = gm[gm.method == m]
        return dict(zip(sel["seed"], sel["value"]))

    bvals = {b: seeds_of(b) for b in bases}
    with_runs = [b for b in bases if bvals[b]]
    shown = with_runs or bases[:1]
    block = [_base_row(where, b, base_value.get(b), metric, bvals[b]) for b in shown]
    tested = []
    for name in names:
        v = seeds_of(name)
        if not v and name not in set(gd.method):
            continue
        own = str(variants[name].get("base", ""))
        ref = own if bvals.get(own) else (with_runs[0] if with_runs else own)
        row = _variant_row(where, name, ref, own, variants[name].get("value"), metric, v, bvals.get(ref, {}),
                           same_runs_between(groups, where["dataset"], name, ref))
        block.append(row)
        tested.append(row)
    _holm(tested)
    return block


def _base_row(where: dict, b: str, value: Any, metric: str, seeds: dict) -> dict:
    d, axis, standin = where["dataset"], where["axis"], where["standin"]
    desc = stats.describe(list(seeds.values()))
    return {"dataset": d, "axis": axis, "variant": b, "base": b,
            "value": value, "is_base": True, "metric": metric,
            "n": desc["n"], "mean": desc["mean"], "std": desc["std"],
            "ci_low": desc["ci95_low"], "ci_high": desc["ci95_high"],
            "n_pairs": math.nan, "mean_diff_vs_base": math.nan,
            "p_vs_base": math.nan, "p_vs_base_holm": math.nan,
            "holm_m": 0, "sd_diff": math.nan, "mdd80": math.nan,
            "holm_alpha": math.nan,
            "mdd80_holm": math.nan,
            "higher_is_better": stats.higher_is_better(metric),
            "standin": standin,
            "note": "base method" + ("" if seeds else ": no result")}


def _variant_row(where: dict, name: str, ref: str, own: str, value: Any, metric: str, v: dict,
                 ref_seeds: dict, same_runs: bool) -> dict:
    """A variant against its reference ``ref`` (its own base ``own``, or the axis' base with runs)."""
    d, axis, standin = where["dataset"], where["axis"], where["standin"]
    desc = stats.describe(list(v.values()))
    res = stats.paired_test(v, ref_seeds)
    note = res["note"]
    if ref != own:
        note = f"tested against {ref}: its own base {own} has no run here; " + note
    if same_runs:
        res.update(p=math.nan, mdd80=math.nan)
        note = f"same training runs as {ref}: no test"
    return {"dataset": d, "axis": axis, "variant": name, "base": ref,
            "value": value, "is_base": False,
            "metric": metric, "n": desc["n"], "mean": desc["mean"],
            "std": desc["std"], "ci_low": desc["ci95_low"],
            "ci_high": desc["ci95_high"], "n_pairs": res["n"],
            "mean_diff_vs_base": res["mean_diff"], "p_vs_base": res["p"],
            "p_vs_base_holm": math.nan, "holm_m": 0, "mdd80": res["mdd80"],
            "sd_diff": res["sd_diff"], "holm_alpha": math.nan, "mdd80_holm": math.nan,
            "higher_is_better": stats.higher_is_better(metric),
            "standin": standin, "note": note.strip("; ")}


def _holm(tested: list[dict]) -> None:
    """Holm's adjustment over the variants of one dataset x axis x metric, into their rows."""
    p = np.array([r["p_vs_base"] for r in tested], dtype=float)
    adj = stats.holm(p) if len(p) else p
    levels = stats.holm_levels(p) if len(p) else p
    for r, q, a in zip(tested, adj, levels):
        r["p_vs_base_holm"] = float(q)
        r["holm_m"] = int(np.isfinite(p).sum())
        r["holm_alpha"] = float(a)
        r["mdd80_holm"] = (stats.min_detectable_difference(
            int(r["n_pairs"]), float(r["sd_diff"]), alpha=float(a))
            if np.isfinite(a) else math.nan)


