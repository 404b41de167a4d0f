"""Summaries over seeds and paired tests: the summary table (mean, std, CI, the paper's number,
the trivial baseline) and the comparisons of the reference method against every other method,
with Holm's correction per family and the detectable difference at each test's Holm level."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from autonorm.analysis import stats

from autonorm.analysis.collect import num
from autonorm.analysis.tables import (COMPARISON_COLUMNS, KNOWN_FAMILY, PAPER_DATASETS,
                                      REFERENCE_METHOD, SUMMARY_COLUMNS)

# --------------------------------------------------------------------------- tables
def _reference_index(reference: pd.DataFrame) -> dict:
    ref_idx = {}
    if len(reference):
        for r in reference.itertuples(index=False):
            ref_idx[(r.dataset, r.method, r.metric)] = (num(r.mean), num(r.std))
    return ref_idx


def same_run_pairs(runs: pd.DataFrame) -> dict[str, dict[str, str]]:
    """dataset -> {method: the name of its group of same training runs}.

    ``same_run_as`` links can chain (a default-valued variant is the same run as
    AutoNorm-S, which on NLP is the same run as AutoNorm), so the links are
    joined into groups; every member of a group maps to one representative.
    Methods without a link are absent.
    """
    out: dict[str, dict[str, str]] = {}
    if runs.empty or "same_run_as" not in runs:
        return out
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x):
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for r in runs.itertuples(index=False):
        other = r.same_run_as if isinstance(r.same_run_as, str) else ""
        if other:
            a, b = find((r.dataset, r.method)), find((r.dataset, other))
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            if a != b:
                parent[max(a, b)] = min(a, b)
    for node in list(parent):
        out.setdefault(node[0], {})[node[1]] = find(node)[1]
    return out


def _path_of(runs: pd.DataFrame, d: str, m: str, sd: int):
    """The run folder of (dataset, method, seed): a seed read through another method's run points at the
    run it reads, so that the runs trained are the distinct paths of the finished rows."""
    if "path" not in runs:
        return None
    hit = runs[(runs.dataset == d) & (runs.method == m) & (runs.seed.astype(int) == sd)]
    return hit.path.iloc[0] if len(hit) else None


def _read_under(raw: dict, d: str, src: str, dst: str, sd: int, frames: Sequence[str]) -> dict:
    """``raw`` with ``src``'s rows of (dataset ``d``, seed ``sd``) in ``frames`` copied under ``dst``
    (replacing any rows ``dst`` had there)."""
    out = dict(raw)
    for name in frames:
        f = out.get(name)
        if f is None or f.empty or "method" not in f:
            continue
        hit = f[(f.dataset == d) & (f.method == src) & (f.seed.astype(int) == sd)]
        own = (f.dataset == d) & (f.method == dst) & (f.seed.astype(int) == sd)
        out[name] = pd.concat([f[~own], hit.assign(method=dst)], ignore_index=True)
    return out


def alias_same_runs(raw: dict) -> dict:
    """``raw`` (the per-run frames) with every run that declares ``same_run_as: <twin>`` but is not
    finished, while its twin's run of that seed is, read as the twin's run under its own name: it is the
    same training by its config (AutoNorm-S on NLP, where the freeze rule is off, is unfrozen AutoNorm),
    so its missing alias must not drop a seed from its method (SST-2's AutoNorm-S seed 2 was recorded
    "missing" beside its twin's finished run). A method declares its twin on any of its runs; the runs row
    says so in its message."""
    runs = raw.get("runs")
    if runs is None or runs.empty or "same_run_as" not in runs:
        return raw
    ok = {(d, m, int(sd)) for d, m, sd, st in zip(runs.dataset, runs.method, runs.seed, runs.status) if st == "ok"}
    # the twin a (dataset, method) declares on any of its runs: the same training by its config, seed for seed
    twin_of = {(d, m): t for d, m, t in zip(runs.dataset, runs.method, runs.same_run_as) if isinstance(t, str) and t}
    todo = [(i, r.dataset, r.method, int(r.seed), twin_of[(r.dataset, r.method)]) for i, r in runs.iterrows()
            if r.status != "ok" and (r.dataset, r.method) in twin_of
            and (r.dataset, twin_of[(r.dataset, r.method)], int(r.seed)) in ok]
    if not todo:
        return raw
    out = dict(raw)
    runs = runs.copy()
    for i, d, m, sd, twin in todo:
        runs.loc[i, "status"] = "ok"
        runs.loc[i, "message"] = f"the same training as {twin} seed {sd} (its finished run, read under {m})"
        runs.loc[i, "path"] = _path_of(runs, d, twin, sd)
        out = _read_under(out, d, twin, m, sd, ("values", "history", "gates", "freeze", "corruptions"))
    out["runs"] = runs
    return out


def _same_but_freezing(configs: dict, d: str, s_cfg: dict, unfrozen: str) -> bool:
    """Whether AutoNorm-S's run config ``s_cfg`` trains what ``unfrozen`` (AutoNorm) trains with its
    freeze rule off: compared with every recorded ``unfrozen`` run of ``d`` (its seed set to ``s_cfg``'s);
    with none recorded, the method registry alone (the two differ only in freezing) decides."""
    from autonorm.config.variants import training_signature

    s_cfg = {**s_cfg, "method": unfrozen}
    want = training_signature(s_cfg)
    others = [c for k, c in configs.items() if k.startswith(f"{d}/{unfrozen}/seed")]
    return all(training_signature({**c, "seed": s_cfg["seed"]}) == want for c in others)


def alias_unfired_freeze(raw: dict, frozen: str = "autonorm_s", unfrozen: str = "autonorm") -> dict:
    """``raw`` with each seed whose AutoNorm-S decided not to freeze, and whose unfrozen AutoNorm was not
    trained, reading AutoNorm-S's run as that seed's unfrozen AutoNorm.

    A freeze rule that does not fire draws no random number and changes nothing (tests/test_train.py:
    the two train weight for weight alike on one machine), so such a run *is* the seed's unfrozen AutoNorm
    run; a study trains unfrozen AutoNorm as a run of its own only where the freeze fired. Read only
    where the decision was taken (an entropy at T_freeze is recorded) and the run configs agree but for
    freezing; the freeze record stays AutoNorm-S's. The runs row says so in its message."""
    runs, freeze = raw.get("runs"), raw.get("freeze")
    if runs is None or runs.empty or freeze is None or freeze.empty:
        return raw
    configs = raw.get("configs") or {}
    ok = {(d, m, int(sd)) for d, m, sd, st in zip(runs.dataset, runs.method, runs.seed, runs.status) if st == "ok"}
    decided = {}
    for r in freeze[freeze.method == frozen].itertuples(index=False):
        h = num(r.entropy_at_decision)
        if str(r.enabled).lower() == "true" and str(r.froze).lower() != "true" and math.isfinite(h):
            decided[(r.dataset, int(r.seed))] = (h, num(r.eps_h), num(r.t_freeze))
    todo = []
    for i, r in runs.iterrows():
        d, sd = r.dataset, int(r.seed)
        if (r.method != unfrozen or r.status == "ok" or (d, sd) not in decided or (d, frozen, sd) not in ok):
            continue
        cfg = configs.get(f"{d}/{frozen}/seed{sd}")
        if cfg is None or not _same_but_freezing(configs, d, cfg, unfrozen):
            continue
        todo.append((i, d, sd))
    if not todo:
        return raw
    out = dict(raw)
    runs = runs.copy()
    for i, d, sd in todo:
        h, eps, t = decided[(d, sd)]
        runs.loc[i, "status"] = "ok"
        runs.loc[i, "message"] = (f"{frozen} seed {sd}'s run: its freeze rule did not fire (mean H {h:.3f} < "
                                  f"eps_H {eps:g} at epoch {t:g}), so it is this seed's {unfrozen} run")
        runs.loc[i, "path"] = _path_of(runs, d, frozen, sd)
        out = _read_under(out, d, frozen, unfrozen, sd, ("values", "history", "gates", "corruptions"))
    out["runs"] = runs
    return out


def same_runs_between(groups: dict[str, dict[str, str]], dataset: str, a: str, b: str) -> bool:
    g = groups.get(dataset, {})
    return a in g and b in g and g[a] == g[b]


def _same_label(groups: dict, d: str, m: str, methods: Sequence[str]) -> str:
    """The other methods (of ``methods``) that are the same training runs as ``m``."""
    g = groups.get(d, {})
    if m not in g:
        return ""
    return ", ".join(o for o in methods if o != m and g.get(o) == g[m])


def _beats(mean: float, base: float, higher: bool):
    if not (math.isfinite(mean) and math.isfinite(base)):
        return None
    return bool(mean <= base) if higher else bool(mean >= base)


def summarize(values: pd.DataFrame, runs: pd.DataFrame, methods: Sequence[str],
              reference: pd.DataFrame, ds_info: dict,
              baselines: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per dataset x method x metric (methods with no ok run get n=0)."""
    rows = []
    ref_idx = _reference_index(reference)
    base_idx = {}
    if baselines is not None and len(baselines):
        for b in baselines.itertuples(index=False):
            base_idx[(b.dataset, b.metric)] = (b.baseline, num(b.value))
    same = same_run_pairs(runs)
    counts = {}
    for (d, m), g in runs.groupby(["dataset", "method"]):
        counts[(d, m)] = (len(g), int((g.status == "diverged").sum()),
                          int((g.status == "missing").sum()), int((g.status == "stale").sum()))
    if len(values):
        groups = values.groupby(["dataset", "source_dataset"], sort=False)
    else:
        groups = []
    for (d, src), gd in groups:
        metrics_here = list(dict.fromkeys(gd["metric"]))
        standin_ds = bool(gd["standin"].any()) or bool(ds_info.get(src, {}).get("standin"))
        family = ds_info.get(src, {}).get("family") or KNOWN_FAMILY.get(src, "other")
        # each (method, metric)'s values in row order, grouped once (a mask per pair costs seconds a page)
        by_pair = {k: g["value"].to_numpy(dtype=float) for k, g in gd.groupby(["method", "metric"], sort=False)}
        for m in methods:
            n_exp, n_div, n_mis, n_stale = counts.get((src, m), (0, 0, 0, 0))
            for metric in metrics_here:
                vals = by_pair.get((m, metric), np.empty(0))
                desc = stats.describe(vals)
                pm, ps = (math.nan, math.nan)
                if not standin_ds and d in PAPER_DATASETS:
                    pm, ps = ref_idx.get((d, m, metric), (math.nan, math.nan))
                bname, bval = base_idx.get((src, metric), ("", math.nan)) if d == src else ("", math.nan)
                hib = stats.higher_is_better(metric)
                rows.append({"dataset": d, "method": m, "metric": metric, **desc,
                             "paper_mean": pm, "paper_std": ps, "standin": standin_ds,
                             "family": family, "metric_family": stats.metric_family(metric),
                             "source_dataset": src, "higher_is_better": hib,
                             "n_expected": n_exp, "n_diverged": n_div, "n_missing": n_mis,
                             "n_stale": n_stale, "baseline_name": bname, "baseline_value": bval,
                             "at_or_below_baseline": _beats(desc["mean"], bval, hib),
                             "same_run_as": _same_label(same, src, m, methods)})
    # datasets with no ok run at all: keep their paper rows visible (n=0)
    seen = {r["source_dataset"] for r in rows}
    for d, info in ds_info.items():
        if d in seen:
            continue
        standin_ds = bool(info.get("standin"))
        ref_metrics = [] if standin_ds else list(dict.fromkeys(
            reference.loc[reference.dataset == d, "metric"])) if len(reference) else []
        for m in methods:
            n_exp, n_div, n_mis, n_stale = counts.get((d, m), (0, 0, 0, 0))
            for metric in ref_metrics:
                pm, ps = ref_idx.get((d, m, metric), (math.nan, math.nan))
                bname, bval = base_idx.get((d, metric), ("", math.nan))
                rows.append({"dataset": d, "method": m, "metric": metric,
                             **stats.describe([]), "paper_mean": pm, "paper_std": ps,
                             "standin": standin_ds, "family": info.get("family"),
                             "metric_family": stats.metric_family(metric), "source_dataset": d,
                             "higher_is_better": stats.higher_is_better(metric),
                             "n_expected": n_exp, "n_diverged": n_div, "n_missing": n_mis,
                             "n_stale": n_stale, "baseline_name": bname, "baseline_value": bval,
                             "at_or_below_baseline": None,
                             "same_run_as": _same_label(same, d, m, methods)})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def compare_methods(values: pd.DataFrame, methods: Sequence[str], ds_info: dict,
                    reference_method: str = REFERENCE_METHOD,
                    same_runs: dict[str, dict[str, str]] | None = None,
                    reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Paired tests of ``reference_method`` vs every other method, Holm per family.

    Two methods that share their training runs (``same_runs``) get a row with
    the note "same training runs: no test" and no p-value.  ``paper_diff`` is
    the paper's reference-minus-other difference (paper datasets only).
    """
    rows = []
    if reference_method not in methods or not len(values):
        return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    same_runs = same_runs or {}
    ref_idx = _reference_index(reference) if reference is not None else {}
    others = [m for m in methods if m != reference_method]
    for (d, src), gd in values.groupby(["dataset", "source_dataset"], sort=False):
        standin_ds = bool(gd["standin"].any())
        family = ds_info.get(src, {}).get("family") or KNOWN_FAMILY.get(src, "other")
        for metric in dict.fromkeys(gd["metric"]):
            mfam = stats.metric_family(metric)
            if mfam == "cost":
                continue
            gmet = gd[gd.metric == metric]
            # each method's {seed: value}, in row order (a later row of a seed wins, as dict() keeps it)
            by_method = {m: dict(zip(g["seed"], g["value"])) for m, g in gmet.groupby("method", sort=False)}
            a = by_method.get(reference_method, {})
            pa = ref_idx.get((d, reference_method, metric), (math.nan,))[0]
            for mb in others:
                b = by_method.get(mb, {})
                res = stats.paired_test(a, b)
                same = same_runs_between(same_runs, src, reference_method, mb)
                if same:
                    # identical runs: a test of a run against itself is 0/0, not evidence
                    res.update(t=math.nan, p=math.nan, cohens_dz=math.nan, wilcoxon_p=math.nan,
                               mdd80=math.nan,
                               note=f"same training runs ({reference_method} = {mb} here): no test")
                pb = ref_idx.get((d, mb, metric), (math.nan,))[0]
                paper_diff = (pa - pb) if (not standin_ds and d in PAPER_DATASETS) else math.nan
                rows.append({"dataset": d, "metric": metric, "method_a": reference_method,
                             "method_b": mb, **res, "p_holm": math.nan, "holm_family": mfam,
                             "holm_m": 0, "higher_is_better": stats.higher_is_better(metric),
                             "standin": standin_ds, "family": family,
                             "paper_diff": paper_diff, "same_runs": bool(same)})
    df = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    if len(df):
        derived = df["metric"].isin(stats.DERIVED_METRICS)
        df.loc[derived & df["p"].notna(), "note"] = [
            ("; ".join(x for x in (str(n) if isinstance(n, str) else "", DERIVED_NOTE) if x))
            for n in df.loc[derived & df["p"].notna(), "note"]]
        for _, idx in df[~derived].groupby(["dataset", "holm_family"]).groups.items():
            p = df.loc[idx, "p"].to_numpy(dtype=float)
            df.loc[idx, "p_holm"] = stats.holm(p)
            df.loc[idx, "holm_m"] = int(np.isfinite(p).sum())
            _holm_detectable(df, idx, p)
    return df


def joint_family(df: pd.DataFrame) -> pd.DataFrame:
    """Holm again over comparisons that are one claim's tests (the learned gates against random: one
    sentence about both), per dataset and metric family: ``p_holm``, ``holm_m``, ``holm_alpha`` and
    ``mdd80_holm`` recomputed over the distinct tests. Two rows with the same n, mean and sd of their
    paired differences are one test (a gate that never froze is its twin's training): the family
    counts it once, and both rows get its numbers."""
    df = df.copy()
    if df.empty:
        return df
    derived = df["metric"].isin(stats.DERIVED_METRICS)
    for _, idx in df[~derived].groupby(["dataset", "holm_family"]).groups.items():
        g = df.loc[idx]
        key = list(zip(g["metric"], g["n"], g["mean_diff"].round(12), g["sd_diff"].round(12)))
        first = {}
        for i, k in zip(idx, key):
            first.setdefault(k, i)
        distinct = list(first.values())
        p = df.loc[distinct, "p"].to_numpy(dtype=float)
        df.loc[distinct, "p_holm"] = stats.holm(p)
        df.loc[distinct, "holm_m"] = int(np.isfinite(p).sum())
        _holm_detectable(df, distinct, p)
        for i, k in zip(idx, key):
            if i != first[k]:
                df.loc[i, ["p_holm", "holm_m", "holm_alpha", "mdd80_holm"]] = \
                    df.loc[first[k], ["p_holm", "holm_m", "holm_alpha", "mdd80_holm"]].to_numpy()
    return df


#: the note of a derived robustness metric's test (stats.DERIVED_METRICS)
DERIVED_NOTE = "derived from the corruption cells: raw p, not counted in Holm"


def _holm_detectable(df: pd.DataFrame, idx, p: np.ndarray) -> None:
    """``holm_alpha`` (the level each test faces in Holm's procedure) and ``mdd80_holm`` (the
    difference detectable at 80% power at that level) for the rows ``idx`` of one family."""
    levels = stats.holm_levels(p)
    df.loc[idx, "holm_alpha"] = levels
    df.loc[idx, "mdd80_holm"] = [
        stats.min_detectable_difference(int(n), float(sd), alpha=float(a)) if np.isfinite(a)
        else math.nan
        for n, sd, a in zip(df.loc[idx, "n"], df.loc[idx, "sd_diff"], levels)]


