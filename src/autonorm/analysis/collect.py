"""Collect: read every expected run folder and eval file into tidy rows (values, runs, gates,
history, freeze, corruptions, datasets, baselines), with the state of each run (ok, diverged,
missing, stale)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from autonorm import provenance
from autonorm.analysis import stats
from autonorm.io_utils import read_json
from autonorm.methods import METHODS

from autonorm.analysis.tables import (BASELINES_COLUMNS, CORRUPTION_COLUMNS, COST_KEYS, DATASETS_COLUMNS, FREEZE_COLUMNS,
                                      GATES_COLUMNS,
                                      HISTORY_COLUMNS, KNOWN_FAMILY, KNOWN_STANDIN, RUNS_COLUMNS,
                                      SELECTOR_RE)

# --------------------------------------------------------------------------- helpers
def num(v: Any) -> float:
    """float(v), with None / non-numeric -> NaN."""
    if v is None or isinstance(v, bool):
        return math.nan if v is None else float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def read_json_or_none(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def parse_selector(name: str) -> tuple[float, str]:
    """'block3.attn' -> (3, 'attn'); 'block3' (one selector per block) -> (3, 'block'); unknown forms
    -> (NaN, name)."""
    m = SELECTOR_RE.match(str(name))
    if m:
        return int(m.group(1)), m.group(2) or "block"
    return math.nan, str(name)


def load_reference(path: str | Path | None) -> pd.DataFrame:
    """Read the paper's numbers (dataset, method, metric, mean, std): ``path``, or the package's
    ``resources/paper_reference.csv``. A missing file is an error, not a report without the
    paper's column."""
    if path is None:
        from importlib import resources

        path = Path(str(resources.files("autonorm") / "resources" / "paper_reference.csv"))
    path = Path(path)
    if not path.is_file():
        import errno

        raise FileNotFoundError(errno.ENOENT, "the paper's reference numbers are missing", str(path))
    return pd.read_csv(path)


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
    cfg = read_json_or_none(run_dir / "config.json")
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
        "n_train": num(sizes.get("train")), "n_val": num(sizes.get("val")),
        "n_test": num(sizes.get("test")), "split_note": meta.get("split_note", ""),
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
             "value": num(v), "higher_is_better": stats.higher_is_better(k)}
            for k, v in tb["test"].items() if math.isfinite(num(v))]


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
                ev = read_json_or_none(f)
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
    rows = _Rows()
    ds_info: dict[str, dict] = {}
    variants: dict[str, dict] = {}
    for d in datasets:
        ds_info[d] = _dataset_info(read_json_or_none(results / "data" / d / "meta.json") or {})
        for m in methods:
            if m in sparse and not ((results / "runs" / d / m).is_dir()
                                    or (results / "eval" / d / m).is_dir()):
                continue
            for s in seeds:
                _collect_run(rows, ds_info[d], variants, results, d, m, s)
    _complete_dataset_info(ds_info)
    return _frames(rows, ds_info, variants)


class _Rows:
    """The rows of each tidy table, filled run by run."""

    def __init__(self) -> None:
        self.values: list[dict] = []
        self.runs: list[dict] = []
        self.gates: list[dict] = []
        self.history: list[dict] = []
        self.freeze: list[dict] = []
        self.corruptions: list[dict] = []


def _dataset_info(meta: Any) -> dict:
    return {
        "family": meta.get("family"),
        "standin": meta.get("standin"),
        "task": meta.get("task"),
        "meta": meta if isinstance(meta, dict) else {},
    }


def _collect_run(rows: _Rows, info: dict, variants: dict[str, dict], results: Path,
                 d: str, m: str, s: Any) -> None:
    """One expected run: its row in ``runs`` and, as its status allows, its values, history and freeze."""
    run_dir, eval_path, ev, metrics, failed = _read_run(results, d, m, s)
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
    ev = _set_status(row, run_dir, ev, metrics, failed)
    _fill_dataset_keys(row, info, ev, metrics)
    rows.runs.append(row)

    if row["status"] == "ok":
        _collect_values(rows.values, rows.corruptions, d, m, int(s), ev, metrics)
    if row["status"] in ("ok", "diverged"):  # never gate data of a stale run
        collect_history(rows.gates, rows.history, d, m, int(s),
                        read_json_or_none(run_dir / "history.json"),
                        gate_choices(read_json_or_none(run_dir / "config.json")))
        fz = read_json_or_none(run_dir / "freeze.json")
        if isinstance(fz, dict):
            rows.freeze.append(_freeze_row(d, m, int(s), fz))


def _read_run(results: Path, d: str, m: str, s: Any) -> tuple[Path, Path, Any, Any, Any]:
    """(run folder, eval path, eval json, metrics.json, failed.json) of one run; an eval json of a
    failed run is no eval json, and stands for the failed.json when the run folder has none."""
    run_dir = results / "runs" / d / m / f"seed{s}"
    eval_path = results / "eval" / d / m / f"seed{s}.json"
    ev = read_json_or_none(eval_path)
    linked = ev.get("same_run_as") if isinstance(ev, dict) else None
    if linked and not (run_dir / "metrics.json").is_file() \
            and not (run_dir / "failed.json").is_file():
        # trained once, under the other name: the workflow writes no run folder
        # for this row (rule same_run_eval), the other run's folder is this one's
        run_dir = results / "runs" / d / str(linked) / f"seed{s}"
    metrics = read_json_or_none(run_dir / "metrics.json")
    failed = read_json_or_none(run_dir / "failed.json")
    ev_failed = None
    if isinstance(ev, dict) and ev.get("status", "ok") != "ok":
        # autonorm-evaluate writes a {status: "diverged"} stub for a failed run:
        # it holds no numbers and must never be read as a result
        ev_failed, ev = ev, None
    if failed is None and metrics is None and ev_failed is not None:
        failed = {"status": ev_failed.get("status"), "epoch": ev_failed.get("epoch"),
                  "step": ev_failed.get("step"),
                  "message": ev_failed.get("message", "(from eval json)")}
    return run_dir, eval_path, ev, metrics, failed


def _set_status(row: dict, run_dir: Path, ev: Any, metrics: Any, failed: Any) -> Any:
    """The run's status (ok, diverged, stale, missing) and message into ``row``; returns the eval
    json whose numbers may be used (None for a run that did not finish)."""
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
        return None  # never use numbers from a diverged run
    if metrics is not None:
        row["status"] = "ok"
        row["epochs"] = num(metrics.get("epochs"))
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
        return ev
    row["status"] = "missing"
    row["message"] = "no metrics.json and no failed.json"
    return None


def _fill_dataset_keys(row: dict, info: dict, ev: Any, metrics: Any) -> None:
    """standin, family and task of the run: its eval json's, else its metrics.json's, else the
    dataset's; the first run to know one tells the dataset."""
    src = ev if ev is not None else (metrics or {})
    for key in ("standin", "family", "task"):
        val = src.get(key) if isinstance(src, dict) else None
        if val is None and metrics is not None:
            val = metrics.get(key)
        if val is None:
            val = info.get(key)
        row[key] = val
        if val is not None and info.get(key) is None:
            info[key] = val


def _freeze_row(d: str, m: str, s: int, fz: dict) -> dict:
    return {"dataset": d, "method": m, "seed": s,
            "enabled": fz.get("enabled"), "t_freeze": num(fz.get("t_freeze")),
            "eps_h": num(fz.get("eps_h")), "froze": fz.get("froze"),
            "epoch": num(fz.get("epoch")),
            "entropy_at_decision": num(fz.get("entropy_at_decision"))}


def _complete_dataset_info(ds_info: dict[str, dict]) -> None:
    """A dataset no run described: its family and stand-in status from the registry's lists."""
    for d, info in ds_info.items():
        if info["family"] is None:
            info["family"] = KNOWN_FAMILY.get(d, "other")
        if info["standin"] is None:
            info["standin"] = d in KNOWN_STANDIN
        info["standin"] = bool(info["standin"])


def _frames(rows: _Rows, ds_info: dict[str, dict], variants: dict[str, dict]) -> dict[str, Any]:
    runs = pd.DataFrame(rows.runs, columns=RUNS_COLUMNS)
    for col in ("standin", "family", "task"):
        runs[col] = [r if r is not None else ds_info[d][col]
                     for r, d in zip(runs[col], runs["dataset"])]
    return {
        "values": pd.DataFrame(rows.values, columns=["dataset", "source_dataset", "method", "seed",
                                                     "metric", "value", "standin"]),
        "runs": runs,
        "gates": pd.DataFrame(rows.gates, columns=GATES_COLUMNS),
        "history": pd.DataFrame(rows.history, columns=HISTORY_COLUMNS),
        "freeze": pd.DataFrame(rows.freeze, columns=FREEZE_COLUMNS),
        "corruptions": pd.DataFrame(rows.corruptions, columns=CORRUPTION_COLUMNS),
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
        v = num(value)
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
                                      "severity": int(sv), "accuracy": num(acc),
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
    method = METHODS.get(str(run_config.get("method")))
    return 3 if (method is not None and method.gate_choices == 3) or str(gates) == "3" else 2


def collect_history(gate_rows: list, hist_rows: list, d: str, m: str, s: int,
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
            "train_loss": num(ep.get("train_loss")), "val_loss": num(ep.get("val_loss")),
            "val_metric": num(ep.get("val_metric")), "val_metric_name": ep.get("val_metric_name"),
            "lr": num(ep.get("lr")), "epoch_time_s": num(ep.get("epoch_time_s")),
            "frozen": bool(ep.get("frozen", False)),
            "mean_entropy": num(gates.get("mean_entropy")) if gates else math.nan,
            "mean_w_dyt": num(gates.get("mean_w_dyt")) if gates else math.nan,
        })
        if not gates:
            continue
        ent = gates.get("entropy") or {}
        wd = gates.get("w_dyt") or {}
        wl = gates.get("w_ln") or {}
        by_name = gates.get("weights")  # since round 4: every choice by its name, no fallback needed
        for sel in sorted(set(ent) | set(wd), key=lambda n: (parse_selector(n)[0]
                                                             if not math.isnan(parse_selector(n)[0])
                                                             else 1e9, n)):
            layer, sub = parse_selector(sel)
            gate_rows.append({
                "dataset": d, "method": m, "seed": s, "epoch": epoch, "selector": sel,
                "layer": layer, "sublayer": sub, "entropy": num(ent.get(sel)),
                "w_dyt": num(wd.get(sel)),
                "w_ln": (num(wl[sel]) if sel in wl
                         else (1.0 - num(wd.get(sel)) if choices == 2 and by_name is None else math.nan)),
                "frozen": bool(ep.get("frozen", False)),
                "val_metric": num(ep.get("val_metric")),
                "val_metric_name": ep.get("val_metric_name"),
                "choice_weights": (json.dumps(by_name[sel], sort_keys=True)
                                   if isinstance(by_name, dict) and sel in by_name else "")})


