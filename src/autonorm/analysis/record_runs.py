"""The runs of a study record: their names, final numbers and provenance, how two records of one
run differ, and a record less (or with only) some runs. analysis.records reads and writes records
with these; analysis.study_folders counts a run once across studies with them."""
from __future__ import annotations

import math

import pandas as pd

#: collect()'s per-run frames, each one file
FRAMES = ("runs", "values", "history", "gates", "freeze", "corruptions", "datasets", "baselines")
#: a run that trained to an end (its numbers or its divergence are facts); "missing" and "stale"
#: rows say only that a results folder lacked a valid run when it was recorded
FINISHED = ("ok", "diverged")

PROVENANCE_COLUMNS = ["dataset", "method", "seed", "config_hash", "data_identity", "training_code",
                      "git_commit", "host", "platform", "cpu", "torch", "device", "torch_threads",
                      "train_wall_time_s", "finished_utc"]


def provenance_of(prov: pd.DataFrame, key, column: str) -> str | None:
    """One provenance field of run ``key`` (dataset, method, seed), as text; None where the run or
    the column is absent (a part recorded before runs wrote their CPU has no ``cpu``) or empty."""
    if column not in prov.columns:
        return None
    row = prov[(prov.dataset == key[0]) & (prov.method == key[1]) & (prov.seed == key[2])]
    return None if not len(row) or pd.isna(row[column].iloc[0]) else str(row[column].iloc[0])


def _key(r) -> tuple[str, str, int]:
    return r.dataset, r.method, int(r.seed)


#: values measured on the machine (wall clock): two trainings of one run differ in them and in no result
MEASURED_TIMES = ("latency_ms_per_batch", "train_wall_time_s")


def run_name(key) -> str:
    return f"{key[0]}/{key[1]}/seed{int(key[2])}"


def parse_run(name: str) -> tuple[str, str, int] | None:
    """``"mnist/autonorm_s/seed2"`` as a run key; None when it is not of that form."""
    parts = name.split("/")
    if len(parts) != 3 or not parts[2].startswith("seed") or not parts[2][4:].isdigit():
        return None
    return parts[0], parts[1], int(parts[2][4:])


def finished_runs(rec: dict) -> list[tuple[str, str, int]]:
    """The runs of a record (a part, a merge, runs_from_results) that finished or diverged."""
    return [_key(r) for r in rec["runs"].itertuples(index=False) if r.status in FINISHED]


def run_numbers(values: pd.DataFrame, key) -> pd.Series:
    """The final numbers of run ``key``, by "dataset:metric" (a CIFAR-10-C value belongs to the
    CIFAR-10 run that made it: its source dataset)."""
    if values.empty:
        return pd.Series(dtype=float)
    src = values["source_dataset"].where(values["source_dataset"].notna(), values.dataset)
    v = values[(src == key[0]) & (values.method == key[1]) & (values.seed == key[2])]
    v = v.assign(metric=v.dataset + ":" + v.metric.astype(str))
    return pd.to_numeric(v.set_index("metric")["value"], errors="coerce").sort_index()


def differing(x: pd.Series, y: pd.Series) -> list[str]:
    """The metrics whose numbers differ between ``x`` and ``y`` (NaN equals NaN)."""
    def same(u, v) -> bool:
        if u is None or v is None:
            return u is v
        return (math.isnan(u) and math.isnan(v)) or math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-12)

    return [m for m in sorted(set(x.index) | set(y.index)) if not same(x.get(m), y.get(m))]


def differences(a: dict, b: dict, key_a, key_b=None) -> list[str]:
    """How run ``key_a`` of record ``a`` and run ``key_b`` (default: the same key) of record ``b``
    differ: config hash, data identity, and the result metrics (not the measured times)."""
    key_b = key_a if key_b is None else key_b
    out = []
    for col in ("config_hash", "data_identity"):
        u, v = provenance_of(a["provenance"], key_a, col), provenance_of(b["provenance"], key_b, col)
        if u != v:
            out.append(f"{col.replace('_', ' ')} {u} vs {v}")
    x, y = run_numbers(a["values"], key_a), run_numbers(b["values"], key_b)
    x, y = (z[[m.split(":", 1)[1] not in MEASURED_TIMES for m in z.index]] for z in (x, y))
    return out + [f"{m} {x.get(m, float('nan')):.10g} vs {y.get(m, float('nan')):.10g}" for m in differing(x, y)]


def select_runs(rec: dict, keys, keep: bool) -> dict:
    """``rec`` with only the runs ``keys`` (keep=True), or without them (keep=False): every per-run
    frame, the provenance and the configs."""
    keys = {(d, m, int(sd)) for d, m, sd in keys}
    out = dict(rec)
    for name in (*FRAMES, "provenance"):
        df = rec[name]
        if not df.empty and {"dataset", "method", "seed"} <= set(df.columns):
            # a CIFAR-10-C value belongs to the CIFAR-10 run that made it (its source dataset)
            src = df["source_dataset"].where(df["source_dataset"].notna(), df.dataset) \
                if "source_dataset" in df.columns else df.dataset
            hit = [((d, m, int(sd)) in keys) == keep for d, m, sd in zip(src, df.method, df.seed)]
            out[name] = df[hit].reset_index(drop=True)
    out["configs"] = {k: v for k, v in rec["configs"].items() if (parse_run(k) in keys) == keep}
    return out
