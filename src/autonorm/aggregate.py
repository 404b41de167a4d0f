"""Aggregate run folders and eval jsons into tidy CSV tables.

Why: every table and figure of the report is drawn from these CSVs, so that a
number in the report can be traced back to one row, and a row back to the run
folders (``runs.csv`` holds the paths).  Inputs (the run-folder format of
docs/data.md):

* ``<results>/runs/<dataset>/<method>/seed<k>/`` with ``metrics.json`` (ok run)
  or ``failed.json`` (diverged run), ``history.json``, ``freeze.json``,
  ``env.json``;
* ``<results>/eval/<dataset>/<method>/seed<k>.json``;
* optionally ``<results>/data/<dataset>/meta.json`` (family, stand-in flag,
  description, split sizes, ``trivial_baseline`` and ``provenance``).

Outputs (``TABLE_NAMES``, all written atomically into ``--out-dir``):

``summary.csv``      one row per dataset x method x metric: n, mean, std (ddof=1),
                     95% t-CI, the paper's mean/std (paper datasets only), and
                     how many runs were expected / diverged / missing.
``comparisons.csv``  autonorm_s vs every other method, paired by seed, with t,
                     p, Holm-adjusted p, Cohen's d_z, Wilcoxon p and a note.
``runs.csv``         one row per expected run: status ok | diverged | missing.
``gates.csv``        per epoch x selector gate entropy and mean w_DyT.
``history.csv``      per epoch: losses, val metric, mean gate entropy / w_DyT.
``freeze.csv``       the AutoNorm-S freeze record of every run.
``corruptions.csv``  accuracy per corruption x severity.
``datasets.csv``     one row per dataset: description, split sizes, provenance
                     status of its files, trivial baseline name.
``baselines.csv``    the trivial baseline's test metrics per dataset.
``ablations.csv``    every method variant beside its base, per dataset x axis x
                     metric, with a paired test against the base.

Stale runs: an eval json records the ``config_hash`` of the run it evaluated;
it is compared with the hash of the run folder's current ``config.json``.  A
mismatch (the folder was reconfigured after the evaluation) makes the run
``stale``: it contributes no number and the report lists it at the top.  A
missing field is ``unknown`` (older formats) and the run is used.

Same runs: an eval json with ``same_run_as: <method>`` (AutoNorm-S on NLP is the
unfrozen AutoNorm run) keeps its row, but no paired test is run between the two.

A diverged or missing run never contributes a number: it appears in
``runs.csv`` (and in the n_diverged / n_missing columns of ``summary.csv``)
only.  Paper values are placed beside ours only for paper datasets; stand-in
datasets (``standin`` true) get none.

Variants (ablations): an eval json carrying ``variant: {name, base, axis,
value}`` belongs to an ablation; such methods are left out of summary.csv and
comparisons.csv (they would enlarge the Holm families of the main table) and
go to ablations.csv, with Holm over the variants of one dataset x axis x metric.

Holm families (documented choice): within each dataset, all comparisons
(every baseline x every metric) whose metric is in the same family of
:func:`autonorm.stats.metric_family` - ``primary`` (accuracy,
tag_perplexity, rmse), ``secondary`` (precision/recall/F1 macro, MAE),
``robustness`` (rotation accuracy, corruption summaries) - form one Holm
family.  Cost metrics are summarised but not tested.
"""
from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from autonorm import provenance, stats
from autonorm.io_utils import read_json, write_csv_atomic
from autonorm.output_names import TABLE_NAMES

REFERENCE_METHOD = "autonorm_s"

PAPER_DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100", "svhn", "ptb_pos", "sst2",
                  "energy_efficiency", "california_housing", "cifar10c")

#: dataset -> family, used when neither metrics.json nor meta.json says
KNOWN_FAMILY = {
    "mnist": "vision", "fashion_mnist": "vision", "cifar10": "vision", "cifar100": "vision",
    "svhn": "vision", "cifar10c": "vision", "ptb_pos": "nlp", "sst2": "nlp",
    "energy_efficiency": "tabular", "california_housing": "tabular",
    "smoke_digits": "vision", "smoke_shapes32": "vision", "smoke_shapes32_c": "vision",
    "smoke_pos": "nlp", "smoke_sentiment": "nlp", "smoke_diabetes": "tabular",
}
KNOWN_STANDIN = {"smoke_digits", "smoke_shapes32", "smoke_shapes32_c", "smoke_pos",
                 "smoke_sentiment", "smoke_diabetes"}

COST_KEYS = stats.COST_METRICS
CORRUPTION_SUMMARY_KEYS = ("gaussian_noise_s3", "motion_blur_s3", "brightness_s3", "mean_s3",
                           "mean_all")

SUMMARY_COLUMNS = ["dataset", "method", "metric", "n", "mean", "std", "ci95_low", "ci95_high",
                   "paper_mean", "paper_std", "standin", "family", "metric_family",
                   "source_dataset", "higher_is_better", "n_expected", "n_diverged", "n_missing",
                   "n_stale", "baseline_name", "baseline_value", "at_or_below_baseline",
                   "same_run_as"]
COMPARISON_COLUMNS = ["dataset", "metric", "method_a", "method_b", "n", "mean_a", "mean_b",
                      "mean_diff", "t", "p", "p_holm", "cohens_dz", "wilcoxon_p", "note",
                      "holm_family", "holm_m", "higher_is_better", "standin", "family",
                      "sd_diff", "mdd80", "holm_alpha", "mdd80_holm", "paper_diff", "same_runs"]
RUNS_COLUMNS = ["dataset", "method", "seed", "status", "path", "eval_path", "has_eval",
                "standin", "family", "task", "epochs", "message", "config_hash_recorded",
                "config_hash_current", "config_state", "same_run_as", "variant_of"]
DATASETS_COLUMNS = ["dataset", "description", "family", "task", "standin", "n_train", "n_val",
                    "n_test", "split_note", "provenance_status", "n_files", "n_files_verified",
                    "provenance_files", "provenance_note", "trivial_baseline"]
BASELINES_COLUMNS = ["dataset", "baseline", "metric", "value", "higher_is_better"]
ABLATION_COLUMNS = ["dataset", "axis", "variant", "base", "value", "is_base", "metric", "n",
                    "mean", "std", "ci_low", "ci_high", "n_pairs", "mean_diff_vs_base",
                    "p_vs_base", "p_vs_base_holm", "holm_m", "sd_diff", "mdd80", "holm_alpha", "mdd80_holm",
                    "higher_is_better", "standin", "note"]
GATES_COLUMNS = ["dataset", "method", "seed", "epoch", "selector", "layer", "sublayer",
                 "entropy", "w_dyt", "w_ln", "frozen", "val_metric", "val_metric_name"]
HISTORY_COLUMNS = ["dataset", "method", "seed", "epoch", "train_loss", "val_loss", "val_metric",
                   "val_metric_name", "lr", "epoch_time_s", "frozen", "mean_entropy",
                   "mean_w_dyt"]
FREEZE_COLUMNS = ["dataset", "method", "seed", "enabled", "t_freeze", "eps_h", "froze", "epoch",
                  "entropy_at_decision"]
CORRUPTION_COLUMNS = ["dataset", "method", "seed", "corruption", "severity", "accuracy",
                      "corruption_set", "standin", "corruption_generated"]


_SELECTOR_RE = re.compile(r"^block(\d+)\.(\w+)$")


# --------------------------------------------------------------------------- helpers
def _num(v: Any) -> float:
    """float(v), with None / non-numeric -> NaN."""
    if v is None or isinstance(v, bool):
        return math.nan if v is None else float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _read_json_or_none(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def parse_selector(name: str) -> tuple[float, str]:
    """'block3.attn' -> (3, 'attn'); unknown forms -> (NaN, name)."""
    m = _SELECTOR_RE.match(str(name))
    if m:
        return int(m.group(1)), m.group(2)
    return math.nan, str(name)


def load_reference(path: str | Path | None) -> pd.DataFrame:
    """Read paper_reference.csv (dataset, method, metric, mean, std)."""
    if path is None:
        path = Path(__file__).resolve().parent / "resources" / "paper_reference.csv"
    path = Path(path)
    if not path.is_file():
        return pd.DataFrame(columns=["dataset", "method", "metric", "mean", "std"])
    ref = pd.read_csv(path)
    return ref


def current_config_hash(cfg: dict) -> str:
    """Hash of a run folder's config.json, computed as the trainer/evaluator do.

    ``provenance.run_config_hash`` when the package has it; otherwise the
    trainer's checkpoint hash (``config_hash`` of the config without
    ``out_dir``), so both sides of the comparison use one definition.
    """
    fn = getattr(provenance, "run_config_hash", None)
    if callable(fn):
        return str(fn(cfg))
    return provenance.config_hash({k: v for k, v in cfg.items() if k != "out_dir"})


def _hashes_match(recorded: str, current: str) -> bool:
    """Equal, or one a prefix of the other (a 16-character short form of a sha256)."""
    a, b = str(recorded).strip().lower(), str(current).strip().lower()
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 8 and long_.startswith(short)


def config_state(run_dir: Path, ev: dict | None, metrics: dict | None) -> tuple[str, str, str]:
    """(state, recorded hash, current hash): state current | stale | unknown.

    The recorded hash is the eval json's ``config_hash`` (else metrics.json's);
    the current one is recomputed from the run folder's config.json now.
    """
    recorded = None
    for src in (ev, metrics):
        if isinstance(src, dict) and src.get("config_hash"):
            recorded = str(src["config_hash"])
            break
    cfg = _read_json_or_none(run_dir / "config.json")
    current = current_config_hash(cfg) if isinstance(cfg, dict) else None
    if recorded is None or current is None:
        return "unknown", recorded or "", current or ""
    return ("current" if _hashes_match(recorded, current) else "stale"), recorded, current


def _dataset_row(d: str, meta: dict, info: dict) -> dict:
    sizes = meta.get("sizes") if isinstance(meta.get("sizes"), dict) else {}
    prov = meta.get("provenance") if isinstance(meta.get("provenance"), dict) else {}
    files = prov.get("files") if isinstance(prov.get("files"), list) else []
    files = [f for f in files if isinstance(f, dict)]
    tb = meta.get("trivial_baseline") if isinstance(meta.get("trivial_baseline"), dict) else {}
    status = prov.get("status")
    if not status:
        status = "stand-in" if info.get("standin") else "not recorded"
    return {
        "dataset": d, "description": meta.get("description", ""),
        "family": info.get("family"), "task": info.get("task"), "standin": info.get("standin"),
        "n_train": _num(sizes.get("train")), "n_val": _num(sizes.get("val")),
        "n_test": _num(sizes.get("test")), "split_note": meta.get("split_note", ""),
        "provenance_status": status, "n_files": len(files),
        "n_files_verified": sum(1 for f in files if f.get("verified") is True),
        "provenance_files": "; ".join(
            f"{f.get('path', '?')} (sha256 {str(f.get('sha256') or '?')[:12]}, "
            f"{f.get('check', 'no check')}: {'verified' if f.get('verified') is True else 'not verified'})"
            for f in files),
        "provenance_note": prov.get("note", ""),
        "trivial_baseline": tb.get("name", ""),
    }


def _baseline_rows(d: str, meta: dict) -> list[dict]:
    tb = meta.get("trivial_baseline")
    if not isinstance(tb, dict) or not isinstance(tb.get("test"), dict):
        return []
    return [{"dataset": d, "baseline": tb.get("name", "trivial baseline"), "metric": k,
             "value": _num(v), "higher_is_better": stats.higher_is_better(k)}
            for k, v in tb["test"].items() if math.isfinite(_num(v))]


def discover_variants(results: str | Path, datasets: Sequence[str],
                      known: Sequence[str]) -> list[str]:
    """Method folders under eval/<dataset>/ not in ``known`` whose eval jsons carry ``variant``."""
    found: list[str] = []
    for d in datasets:
        base = Path(results) / "eval" / d
        if not base.is_dir():
            continue
        for mdir in sorted(p for p in base.iterdir() if p.is_dir()):
            if mdir.name in known or mdir.name in found:
                continue
            for f in sorted(mdir.glob("seed*.json")):
                ev = _read_json_or_none(f)
                if isinstance(ev, dict) and isinstance(ev.get("variant"), dict):
                    found.append(mdir.name)
                    break
    return found


def corruption_dataset_name(source: str) -> str:
    """Name under which a source dataset's corruption summary is reported.

    cifar10 -> 'cifar10c' (matches the paper reference csv); stand-ins keep
    their own name (e.g. smoke_shapes32) so that they can never be confused
    with the paper's CIFAR-10-C numbers.
    """
    return "cifar10c" if source == "cifar10" else source


# --------------------------------------------------------------------------- collection
def collect(results: str | Path, datasets: Sequence[str], methods: Sequence[str],
            seeds: Sequence[int], sparse: Iterable[str] = ()) -> dict[str, pd.DataFrame]:
    """Read every expected run; return raw tidy frames (values, runs, gates, ...).

    Methods in ``sparse`` (ablation variants, declared for a few datasets
    only) are expected only on datasets where they have a run or eval folder.
    """
    sparse = set(sparse)
    results = Path(results)
    value_rows: list[dict] = []
    run_rows: list[dict] = []
    gate_rows: list[dict] = []
    hist_rows: list[dict] = []
    freeze_rows: list[dict] = []
    corr_rows: list[dict] = []
    ds_info: dict[str, dict] = {}
    variants: dict[str, dict] = {}

    for d in datasets:
        meta = _read_json_or_none(results / "data" / d / "meta.json") or {}
        ds_info[d] = {
            "family": meta.get("family"),
            "standin": meta.get("standin"),
            "task": meta.get("task"),
            "meta": meta if isinstance(meta, dict) else {},
        }
        for m in methods:
            if m in sparse and not ((results / "runs" / d / m).is_dir()
                                    or (results / "eval" / d / m).is_dir()):
                continue
            for s in seeds:
                run_dir = results / "runs" / d / m / f"seed{s}"
                eval_path = results / "eval" / d / m / f"seed{s}.json"
                ev = _read_json_or_none(eval_path)
                linked = ev.get("same_run_as") if isinstance(ev, dict) else None
                if linked and not (run_dir / "metrics.json").is_file() \
                        and not (run_dir / "failed.json").is_file():
                    # trained once, under the other name: the workflow writes no run folder
                    # for this row (rule same_run_eval), the other run's folder is this one's
                    run_dir = results / "runs" / d / str(linked) / f"seed{s}"
                metrics = _read_json_or_none(run_dir / "metrics.json")
                failed = _read_json_or_none(run_dir / "failed.json")
                ev_failed = None
                if isinstance(ev, dict) and ev.get("status", "ok") != "ok":
                    # autonorm-evaluate writes a {status: "diverged"} stub for a failed run:
                    # it holds no numbers and must never be read as a result
                    ev_failed, ev = ev, None
                if failed is None and metrics is None and ev_failed is not None:
                    failed = {"status": ev_failed.get("status"), "epoch": ev_failed.get("epoch"),
                              "step": ev_failed.get("step"),
                              "message": ev_failed.get("message", "(from eval json)")}
                row = {"dataset": d, "method": m, "seed": int(s), "path": str(run_dir),
                       "eval_path": str(eval_path) if ev is not None else "",
                       "has_eval": ev is not None, "standin": None, "family": None,
                       "task": None, "epochs": math.nan, "message": "",
                       "config_hash_recorded": "", "config_hash_current": "",
                       "config_state": "", "same_run_as": "", "variant_of": ""}
                if isinstance(ev, dict):
                    if ev.get("same_run_as"):
                        row["same_run_as"] = str(ev["same_run_as"])
                    var = ev.get("variant")
                    if isinstance(var, dict):
                        row["variant_of"] = str(var.get("base", ""))
                        variants.setdefault(m, dict(var))
                if failed is not None:
                    # any failed.json is a non-finished run; its status (docs/data.md) is
                    # "diverged", another status word is kept in the message
                    row["status"] = "diverged"
                    fstat = str(failed.get("status", "diverged"))
                    row["message"] = ((f"[{fstat}] " if fstat != "diverged" else "")
                                      + f"epoch {failed.get('epoch')}, step {failed.get('step')}: "
                                      f"{failed.get('message', '')}").strip()
                    row["eval_path"] = ""
                    row["has_eval"] = False
                    ev = None  # never use numbers from a diverged run
                elif metrics is not None:
                    row["status"] = "ok"
                    row["epochs"] = _num(metrics.get("epochs"))
                    state, rec, cur = config_state(run_dir, ev, metrics)
                    row.update(config_state=state, config_hash_recorded=rec,
                               config_hash_current=cur)
                    if state == "stale":
                        # the folder was reconfigured after these numbers were produced:
                        # they belong to a config that no longer exists
                        row["status"] = "stale"
                        row["message"] = (f"recorded config_hash {rec} != hash of the run "
                                          f"folder's config.json now ({cur}): excluded")
                    elif ev is None:
                        row["message"] = "eval json missing: test/cost taken from metrics.json"
                else:
                    row["status"] = "missing"
                    row["message"] = "no metrics.json and no failed.json"
                    ev = None
                src = ev if ev is not None else (metrics or {})
                for key in ("standin", "family", "task"):
                    val = src.get(key) if isinstance(src, dict) else None
                    if val is None and metrics is not None:
                        val = metrics.get(key)
                    if val is None:
                        val = ds_info[d].get(key)
                    row[key] = val
                    if val is not None and ds_info[d].get(key) is None:
                        ds_info[d][key] = val
                run_rows.append(row)

                if row["status"] == "ok":
                    _collect_values(value_rows, corr_rows, d, m, int(s), ev, metrics)
                if row["status"] in ("ok", "diverged"):  # never gate data of a stale run
                    _collect_history(gate_rows, hist_rows, d, m, int(s),
                                     _read_json_or_none(run_dir / "history.json"),
                                     gate_choices(_read_json_or_none(run_dir / "config.json")))
                    fz = _read_json_or_none(run_dir / "freeze.json")
                    if isinstance(fz, dict):
                        freeze_rows.append({
                            "dataset": d, "method": m, "seed": int(s),
                            "enabled": fz.get("enabled"), "t_freeze": _num(fz.get("t_freeze")),
                            "eps_h": _num(fz.get("eps_h")), "froze": fz.get("froze"),
                            "epoch": _num(fz.get("epoch")),
                            "entropy_at_decision": _num(fz.get("entropy_at_decision"))})

    for d, info in ds_info.items():
        if info["family"] is None:
            info["family"] = KNOWN_FAMILY.get(d, "other")
        if info["standin"] is None:
            info["standin"] = d in KNOWN_STANDIN
        info["standin"] = bool(info["standin"])
    runs = pd.DataFrame(run_rows, columns=RUNS_COLUMNS)
    for col in ("standin", "family", "task"):
        runs[col] = [r if r is not None else ds_info[d][col]
                     for r, d in zip(runs[col], runs["dataset"])]
    return {
        "values": pd.DataFrame(value_rows, columns=["dataset", "source_dataset", "method", "seed",
                                                    "metric", "value", "standin"]),
        "runs": runs,
        "gates": pd.DataFrame(gate_rows, columns=GATES_COLUMNS),
        "history": pd.DataFrame(hist_rows, columns=HISTORY_COLUMNS),
        "freeze": pd.DataFrame(freeze_rows, columns=FREEZE_COLUMNS),
        "corruptions": pd.DataFrame(corr_rows, columns=CORRUPTION_COLUMNS),
        "datasets": pd.DataFrame([_dataset_row(d, info["meta"], info)
                                  for d, info in ds_info.items()], columns=DATASETS_COLUMNS),
        "baselines": pd.DataFrame([r for d, info in ds_info.items()
                                   for r in _baseline_rows(d, info["meta"])],
                                  columns=BASELINES_COLUMNS),
        "ds_info": ds_info,
        "variants": variants,
    }


def _collect_values(value_rows: list, corr_rows: list, d: str, m: str, s: int,
                    ev: dict | None, metrics: dict | None) -> None:
    src = ev if ev is not None else metrics
    standin = bool((src or {}).get("standin", (metrics or {}).get("standin", d in KNOWN_STANDIN)))

    def add(dataset: str, metric: str, value: Any, standin_flag: bool = standin) -> None:
        v = _num(value)
        value_rows.append({"dataset": dataset, "source_dataset": d, "method": m, "seed": s,
                           "metric": metric, "value": v, "standin": standin_flag})

    test = (src or {}).get("test") or {}
    for k, v in test.items():
        add(d, k, v)
    if ev is not None:
        rot = ev.get("rotation")
        if isinstance(rot, dict) and "accuracy" in rot:
            add(d, "rotation_accuracy", rot["accuracy"])
        generated = ev.get("corruption_generated")
        cs = ev.get("corruption_summary")
        if isinstance(cs, dict):
            cd = corruption_dataset_name(d)
            # a generated corruption set is not CIFAR-10-C: no paper comparison
            cstandin = standin or bool(generated)
            for k, v in cs.items():
                add(cd, k, v, cstandin)
        corr = ev.get("corruptions")
        if isinstance(corr, dict):
            cset = "cifar10c" if d == "cifar10" else f"{d}_c"
            for cname, sev in corr.items():
                if not isinstance(sev, dict):
                    continue
                for sv, acc in sev.items():
                    corr_rows.append({"dataset": d, "method": m, "seed": s, "corruption": cname,
                                      "severity": int(sv), "accuracy": _num(acc),
                                      "corruption_set": cset, "standin": standin,
                                      "corruption_generated": generated})
    cost = (src or {}).get("cost") or (metrics or {}).get("cost") or {}
    for k in COST_KEYS:
        if k in cost:
            add(d, k, cost[k])


def gate_choices(run_config: Any) -> int:
    """How many branches a run's gates mix: 3 for AutoNorm-3 (method or ``autonorm.gates: 3``)."""
    if not isinstance(run_config, dict):
        return 2
    gates = (run_config.get("norm_options") or {}).get("gates", 2)
    return 3 if run_config.get("method") == "autonorm3" or str(gates) == "3" else 2


def _collect_history(gate_rows: list, hist_rows: list, d: str, m: str, s: int,
                     hist: Any, choices: int = 2) -> None:
    """``choices``: branches of the run's gates; a history without ``w_ln`` (older runs) gets
    w_LN = 1 - w_DyT only where that holds, with two branches."""
    if not isinstance(hist, list):
        return
    for i, ep in enumerate(hist):
        if not isinstance(ep, dict):
            continue
        epoch = ep.get("epoch", i + 1)
        gates = ep.get("gates") if isinstance(ep.get("gates"), dict) else None
        hist_rows.append({
            "dataset": d, "method": m, "seed": s, "epoch": epoch,
            "train_loss": _num(ep.get("train_loss")), "val_loss": _num(ep.get("val_loss")),
            "val_metric": _num(ep.get("val_metric")), "val_metric_name": ep.get("val_metric_name"),
            "lr": _num(ep.get("lr")), "epoch_time_s": _num(ep.get("epoch_time_s")),
            "frozen": bool(ep.get("frozen", False)),
            "mean_entropy": _num(gates.get("mean_entropy")) if gates else math.nan,
            "mean_w_dyt": _num(gates.get("mean_w_dyt")) if gates else math.nan,
        })
        if not gates:
            continue
        ent = gates.get("entropy") or {}
        wd = gates.get("w_dyt") or {}
        wl = gates.get("w_ln") or {}
        for sel in sorted(set(ent) | set(wd), key=lambda n: (parse_selector(n)[0]
                                                             if not math.isnan(parse_selector(n)[0])
                                                             else 1e9, n)):
            layer, sub = parse_selector(sel)
            gate_rows.append({
                "dataset": d, "method": m, "seed": s, "epoch": epoch, "selector": sel,
                "layer": layer, "sublayer": sub, "entropy": _num(ent.get(sel)),
                "w_dyt": _num(wd.get(sel)),
                "w_ln": (_num(wl[sel]) if sel in wl
                         else (1.0 - _num(wd.get(sel)) if choices == 2 else math.nan)),
                "frozen": bool(ep.get("frozen", False)),
                "val_metric": _num(ep.get("val_metric")),
                "val_metric_name": ep.get("val_metric_name")})


# --------------------------------------------------------------------------- tables
def _reference_index(reference: pd.DataFrame) -> dict:
    ref_idx = {}
    if len(reference):
        for r in reference.itertuples(index=False):
            ref_idx[(r.dataset, r.method, r.metric)] = (_num(r.mean), _num(r.std))
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
            base_idx[(b.dataset, b.metric)] = (b.baseline, _num(b.value))
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
        for m in methods:
            gm = gd[gd.method == m]
            n_exp, n_div, n_mis, n_stale = counts.get((src, m), (0, 0, 0, 0))
            for metric in metrics_here:
                vals = gm.loc[gm.metric == metric, "value"].to_numpy(dtype=float)
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
            a = dict(zip(gmet.loc[gmet.method == reference_method, "seed"],
                         gmet.loc[gmet.method == reference_method, "value"]))
            pa = ref_idx.get((d, reference_method, metric), (math.nan,))[0]
            for mb in others:
                b = dict(zip(gmet.loc[gmet.method == mb, "seed"],
                             gmet.loc[gmet.method == mb, "value"]))
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
    x = _num(v)
    return (0, x, "") if math.isfinite(x) else (1, math.inf, str(v))


#: ablation axes whose paper claim is about the speed of convergence (hard Gumbel "converges
#: significantly slower"): they are also tested on the learning curves
CONVERGENCE_AXES = ("gumbel",)


def convergence_values(history: pd.DataFrame, methods: Sequence[str]) -> pd.DataFrame:
    """Per run of ``methods``: epochs to reach 99% of its final validation metric, as rows of the
    values table (metric ``epochs_to_99pct``)."""
    cols = ["dataset", "source_dataset", "method", "seed", "metric", "value", "standin"]
    if history is None or history.empty:
        return pd.DataFrame([], columns=cols)
    h = history[history.method.isin(list(methods))]
    rows = []
    for (d, m, s), g in h.groupby(["dataset", "method", "seed"], sort=False):
        name = next((str(x) for x in g["val_metric_name"] if isinstance(x, str)), "")
        rows.append({"dataset": d, "source_dataset": d, "method": m, "seed": int(s),
                     "metric": "epochs_to_99pct",
                     "value": stats.epochs_to_fraction(zip(g["epoch"], g["val_metric"]),
                                                       stats.higher_is_better(name)),
                     "standin": False})
    return pd.DataFrame(rows, columns=cols)


def ablation_table(values: pd.DataFrame, runs: pd.DataFrame, variants: dict[str, dict],
                   results: str | Path | None = None,
                   history: pd.DataFrame | None = None) -> pd.DataFrame:
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
            base_value = {}
            for b in bases:
                bv = next((variants[n].get("base_value") for n in names
                           if variants[n].get("base") == b
                           and variants[n].get("base_value") is not None), None)
                if bv is None and results is not None:
                    brun = runs[(runs.dataset == d) & (runs.method == b) & (runs.status == "ok")]
                    for path in brun["path"]:
                        bv = _axis_value_in_config(
                            _read_json_or_none(Path(path) / "config.json"), axis)
                        if bv is not None:
                            break
                if bv is None:
                    # a variant that is the base's own runs carries the base's value (gate_2)
                    bv = next((variants[n].get("value") for n in names
                               if same_runs_between(groups, d, n, b)), None)
                base_value[b] = bv
            metrics = [m for m in dict.fromkeys(gd.loc[gd.method.isin(names), "metric"])
                       if stats.metric_family(m) == "primary"]
            if any(k in axis.lower() for k in CONVERGENCE_AXES):
                conv = convergence_values(history, names + bases)
                conv = conv[conv.dataset == d].assign(standin=standin)
                if len(conv):
                    gd = pd.concat([gd, conv], ignore_index=True)
                    metrics += list(stats.CONVERGENCE_METRICS)
            for metric in metrics:
                gm = gd[gd.metric == metric]

                def seeds_of(m):
                    sel = gm[gm.method == m]
                    return dict(zip(sel["seed"], sel["value"]))

                bvals = {b: seeds_of(b) for b in bases}
                with_runs = [b for b in bases if bvals[b]]
                shown = with_runs or bases[:1]
                block = []
                for b in shown:
                    desc = stats.describe(list(bvals[b].values()))
                    block.append({"dataset": d, "axis": axis, "variant": b, "base": b,
                                  "value": base_value.get(b), "is_base": True, "metric": metric,
                                  "n": desc["n"], "mean": desc["mean"], "std": desc["std"],
                                  "ci_low": desc["ci95_low"], "ci_high": desc["ci95_high"],
                                  "n_pairs": math.nan, "mean_diff_vs_base": math.nan,
                                  "p_vs_base": math.nan, "p_vs_base_holm": math.nan,
                                  "holm_m": 0, "sd_diff": math.nan, "mdd80": math.nan,
                                  "holm_alpha": math.nan,
                                  "mdd80_holm": math.nan,
                                  "higher_is_better": stats.higher_is_better(metric),
                                  "standin": standin,
                                  "note": "base method" + ("" if bvals[b] else ": no result")})
                tested = []
                for name in names:
                    v = seeds_of(name)
                    if not v and name not in set(gd.method):
                        continue
                    own = str(variants[name].get("base", ""))
                    ref = own if bvals.get(own) else (with_runs[0] if with_runs else own)
                    desc = stats.describe(list(v.values()))
                    res = stats.paired_test(v, bvals.get(ref, {}))
                    note = res["note"]
                    if ref != own:
                        note = f"tested against {ref}: its own base {own} has no run here; " + note
                    if same_runs_between(groups, d, name, ref):
                        res.update(p=math.nan, mdd80=math.nan)
                        note = f"same training runs as {ref}: no test"
                    row = {"dataset": d, "axis": axis, "variant": name, "base": ref,
                           "value": variants[name].get("value"), "is_base": False,
                           "metric": metric, "n": desc["n"], "mean": desc["mean"],
                           "std": desc["std"], "ci_low": desc["ci95_low"],
                           "ci_high": desc["ci95_high"], "n_pairs": res["n"],
                           "mean_diff_vs_base": res["mean_diff"], "p_vs_base": res["p"],
                           "p_vs_base_holm": math.nan, "holm_m": 0, "mdd80": res["mdd80"],
                           "sd_diff": res["sd_diff"], "holm_alpha": math.nan, "mdd80_holm": math.nan,
                           "higher_is_better": stats.higher_is_better(metric),
                           "standin": standin, "note": note.strip("; ")}
                    block.append(row)
                    tested.append(row)
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
                rows.extend(block)
    return pd.DataFrame(rows, columns=ABLATION_COLUMNS)


def aggregate(results: str | Path, datasets: Sequence[str], methods: Sequence[str],
              seeds: Sequence[int], out_dir: str | Path,
              reference: str | Path | None = None,
              reference_method: str = REFERENCE_METHOD,
              variants: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
    """Collect, summarise, compare and write all tables; returns the frames.

    ``variants``: ablation method names; ``None`` finds them on disk (method
    folders under eval/<dataset>/ whose eval jsons carry a ``variant`` field).
    """
    methods = list(dict.fromkeys(methods))
    if variants is None:
        variants = discover_variants(results, datasets, methods)
    all_methods = methods + [v for v in variants if v not in methods]
    raw = collect(results, datasets, all_methods, seeds,
                  sparse=[v for v in variants if v not in methods])
    var_info = dict(raw["variants"])
    for v in variants:  # a declared variant with no eval json yet: axis unknown
        var_info.setdefault(v, {"name": v, "base": "", "axis": "unknown", "value": v})
    main_methods = [m for m in methods if m not in var_info]
    ref = load_reference(reference)
    main_values = raw["values"][raw["values"].method.isin(main_methods)]
    main_runs = raw["runs"][raw["runs"].method.isin(main_methods)]
    summary = summarize(main_values, main_runs, main_methods, ref, raw["ds_info"],
                        raw["baselines"])
    comparisons = compare_methods(main_values, main_methods, raw["ds_info"], reference_method,
                                  same_run_pairs(raw["runs"]), ref)
    ablations = ablation_table(raw["values"], raw["runs"], var_info, results, raw["history"])
    tables = {
        "summary.csv": summary,
        "comparisons.csv": comparisons,
        "runs.csv": raw["runs"],
        "gates.csv": raw["gates"],
        "history.csv": raw["history"],
        "freeze.csv": raw["freeze"],
        "corruptions.csv": raw["corruptions"],
        "datasets.csv": raw["datasets"],
        "baselines.csv": raw["baselines"],
        "ablations.csv": ablations,
    }
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, df in tables.items():
        write_csv_atomic(out_dir / name, df, float_format="%.10g")
    return tables


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-aggregate", description=__doc__.split("\n")[0])
    p.add_argument("--results", required=True, help="results root (holds runs/, eval/, data/)")
    p.add_argument("--datasets", nargs="+", required=True)
    p.add_argument("--methods", nargs="+", required=True)
    p.add_argument("--seeds", nargs="+", type=int, required=True)
    p.add_argument("--out-dir", required=True, help="where the csv tables go")
    p.add_argument("--reference", default=None,
                   help="paper reference csv (default: the package's paper_reference.csv)")
    p.add_argument("--reference-method", default=REFERENCE_METHOD,
                   help="method compared against every other one (default: autonorm_s)")
    p.add_argument("--variants", nargs="*", default=None,
                   help="ablation variants (method names); default: found on disk by the "
                        "'variant' field of their eval jsons")
    return p


def main(argv: Iterable[str] | None = None) -> int:
    """The command line (``autonorm-aggregate``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from .cli import guarded

    return guarded("autonorm-aggregate", _main, argv)


def _main(argv: Iterable[str] | None = None) -> int:
    args = build_parser().parse_args(None if argv is None else list(argv))
    tables = aggregate(args.results, args.datasets, args.methods, args.seeds, args.out_dir,
                       args.reference, args.reference_method, args.variants)
    runs = tables["runs.csv"]
    n_ok = int((runs.status == "ok").sum())
    print(f"autonorm-aggregate: {len(runs)} expected runs, {n_ok} ok, "
          f"{int((runs.status == 'diverged').sum())} diverged, "
          f"{int((runs.status == 'missing').sum())} missing, "
          f"{int((runs.status == 'stale').sum())} stale -> {args.out_dir}")
    for r in runs[runs.status == "stale"].itertuples(index=False):
        print(f"autonorm-aggregate: STALE (excluded): {r.path}: {r.message}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
