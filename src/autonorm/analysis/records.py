"""Study records: a study's results as committed data.

A results folder holds model weights, checkpoints and processed data (gigabytes, never committed).
A *record* keeps what the tables, the report and the findings page read of it, per run (no weights,
no raw data), in a few compressed CSV files that pandas reads, plus a manifest:

    studies/<study>/<part>/manifest.json     schema version, sha256 of every file, commit, date,
                                             command, machine, the grid the part holds
    studies/<study>/<part>/runs.csv.gz       one row per run: status, config hash, epochs, ...
    studies/<study>/<part>/values.csv.gz     final metrics per run (test, rotation, corruptions, cost)
    studies/<study>/<part>/history.csv.gz    per epoch: losses, validation metric, mean gate entropy
    studies/<study>/<part>/gates.csv.gz      per epoch x selector: entropy and the weight of each choice
    studies/<study>/<part>/freeze.csv.gz     AutoNorm-S's freeze decision per run
    studies/<study>/<part>/corruptions.csv.gz, datasets.csv.gz, baselines.csv.gz
    studies/<study>/<part>/provenance.csv.gz per run: commit, machine, torch, device, data identity,
                                             training-code digest, train time, finish time
    studies/<study>/<part>/configs.json.gz   each run's resolved config (paths removed)
    studies/<study>/<part>/datasets.json.gz  each dataset's meta.json (vocabularies removed)

A study may be recorded in parts (seeds 0-1 one day, seed 2 the next; a cluster's share of the
grid): every part of ``studies/<study>/`` is read and merged. A part whose files do not match its
manifest is refused naming the file; a part of another schema version is refused naming the
version; two parts holding the same run, or runs of one dataset and method whose resolved configs
differ in more than the seed, or runs trained by different code (the training-code digest), are
refused naming the runs and the difference (a run in two parts: the same run twice, or one that
differs). docs/develop.md "Study records" lists every column.

What a study folder may hold, and a run counted once across studies: analysis.study_folders
(``load_study`` and ``parts_of`` live there and are read here too); the ``--record`` command line:
analysis.record_cli; a record's runs (names, numbers, differences): analysis.record_runs.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import platform
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from autonorm.data.errors import DataCorruptError
from autonorm.io_utils import read_json, write_json_atomic
from autonorm.provenance import PATH_ONLY_KEYS, NESTED_PATH_KEYS
from autonorm.analysis.record_runs import (FINISHED, FRAMES, PROVENANCE_COLUMNS, differences, differing,
                                           finished_runs, provenance_of, run_name, run_numbers, select_runs)

SCHEMA_VERSION = 1
#: keys of a dataset's meta.json left out of a record (large, and nothing downstream reads them)
META_DROP = ("itos", "split_files")
MANIFEST = "manifest.json"


class RecordError(DataCorruptError):
    """A study record that cannot be read or merged as it is; the message names file or runs
    (an entry point prints it as one paragraph: autonorm.cli)."""


# --------------------------------------------------------------------------- writing
def _gzip(data: bytes) -> bytes:
    """gzip with no time stamp or file name, so the same table gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="", compresslevel=9) as fh:
        fh.write(data)
    return buf.getvalue()


def _csv_bytes(df: pd.DataFrame) -> bytes:
    # repr floats (pandas' default): a record reads back the very numbers the run wrote
    return _gzip(df.to_csv(index=False, lineterminator="\n").encode("utf-8"))


def _json_bytes(obj: Any) -> bytes:
    return _gzip(json.dumps(obj, sort_keys=True, indent=1, default=str).encode("utf-8"))


def _grid(results: Path) -> tuple[list[str], list[str], list[int]]:
    """The datasets, methods and seeds that have a run or eval folder under ``results``; methods in
    the order of the folder's own summary table when it has one (the config's order)."""
    runs, evals = results / "runs", results / "eval"
    datasets = sorted({p.name for root in (runs, evals) if root.is_dir() for p in root.iterdir() if p.is_dir()})
    methods, seeds = set(), set()
    for d in datasets:
        for p in (runs / d).glob("*/seed*"):
            methods.add(p.parent.name)
            seeds.add(int(p.name[4:]))
        for p in (evals / d).glob("*/seed*.json"):
            methods.add(p.parent.name)
            seeds.add(int(p.stem[4:]))
    from autonorm.data.registry import DATASETS
    from autonorm.methods import METHODS

    summary = results / "tables" / "summary.csv"
    table = pd.read_csv(summary) if summary.is_file() else pd.DataFrame(columns=["dataset", "method"])

    def ordered(found: set, column: str, registry) -> list:
        order = [x for x in dict.fromkeys(table[column]) if x in found]
        order += [x for x in registry if x in found and x not in order]
        return order + sorted(found - set(order))

    return ordered(set(datasets), "dataset", DATASETS), ordered(methods, "method", METHODS), sorted(seeds)


def _strip_paths(cfg: dict) -> dict:
    cfg = {k: v for k, v in cfg.items() if k not in PATH_ONLY_KEYS}
    for block, keys in NESTED_PATH_KEYS.items():
        if isinstance(cfg.get(block), dict):
            cfg[block] = {k: v for k, v in cfg[block].items() if k not in keys}
    return cfg


def mixed_attempts(env: dict) -> list[str]:
    """The distinct (CPU type, thread count) settings of a run's attempts, worded, where it has more than one
    (env.json's ``earlier_attempts``, kept by a resumed run); [] for a run of one setting."""
    attempts = list(env.get("earlier_attempts") or []) + [env]
    settings = sorted({(str(a.get("cpu")), a.get("torch_threads")) for a in attempts}, key=str)
    if len(settings) < 2:
        return []
    return [f"{c!r} at {t} threads" for c, t in settings]


def runs_from_results(results: str | Path, cpu: str | None = None) -> dict:
    """The per-run frames of a results folder (analysis.collect), as a record holds them: only
    runs that finished or diverged, paths relative to the folder, and each run's config and
    provenance beside them. ``cpu`` (``--record --cpu``) is the CPU of the runs whose env.json
    records none (trained by code older than its ``cpu`` key): filled in, and named in
    ``out["cpu_declared"]``; a run that records another CPU is refused."""
    from autonorm.analysis.collect import collect, discover_variants

    results = Path(results)
    datasets, methods, seeds = _grid(results)
    if not datasets:
        raise RecordError(f"{results}: no runs/ or eval/ folder with runs in it: nothing to record")
    variants = discover_variants(results, datasets, [])  # in the order the aggregate step finds them
    main = [m for m in methods if m not in variants]
    raw = collect(results, datasets, main + list(variants), seeds, sparse=variants)
    # every run of the grid as the folder has it: ok, diverged, missing or stale (the tables count
    # all four, so that a record's tables are its results folder's)
    out: dict[str, Any] = {name: raw[name].reset_index(drop=True) for name in FRAMES}
    for col in ("path", "eval_path"):
        out["runs"][col] = [str(Path(p).relative_to(results)) if p and Path(p).is_relative_to(results) else p
                            for p in out["runs"][col]]
    configs, prov, declared = {}, [], []
    for r in out["runs"].itertuples(index=False):
        if r.status not in FINISHED:
            continue
        run_dir = results / r.path
        key = f"{r.dataset}/{r.method}/seed{int(r.seed)}"
        cfg = _read(run_dir / "config.json")
        if cfg:
            configs[key] = _strip_paths(cfg)
        env, metrics = _read(run_dir / "env.json"), _read(run_dir / "metrics.json")
        packages = env.get("packages") or {}
        if machines := mixed_attempts(env):
            raise RecordError(f"{run_dir / 'env.json'}: the run resumed on another machine setting, so its epochs "
                              f"trained on {' and '.join(machines)}: floats rounded two ways in one run, which pairs "
                              "with no run of either; train it again on one machine (delete its run folder)")
        if cpu is not None and not env.get("cpu"):
            env["cpu"] = cpu
            declared.append(key)
        elif cpu is not None and env["cpu"] != cpu:
            raise RecordError(f"{run_dir / 'env.json'} records the cpu {env['cpu']!r}, and --cpu declares {cpu!r}: "
                              "--cpu fills in only runs that record none; record this run without --cpu, or the "
                              "others as another part")
        prov.append({"dataset": r.dataset, "method": r.method, "seed": int(r.seed),
                     "config_hash": (metrics or env).get("config_hash"),
                     "data_identity": (metrics or env).get("data_identity"),
                     "training_code": env.get("training_code"), "git_commit": env.get("git_commit"),
                     "host": env.get("host"), "platform": env.get("platform"), "cpu": env.get("cpu"),
                     "torch": packages.get("torch"),
                     "device": env.get("device"), "torch_threads": env.get("torch_threads"),
                     "train_wall_time_s": (metrics.get("cost") or {}).get("train_wall_time_s"),
                     "finished_utc": metrics.get("finished_utc")})
    out["provenance"] = pd.DataFrame(prov, columns=PROVENANCE_COLUMNS)
    out["cpu_declared"] = {cpu: declared} if declared else {}
    out["configs"] = configs
    out["ds_info"] = {d: {**{k: v for k, v in info.items() if k != "meta"},
                          "meta": {k: v for k, v in (info.get("meta") or {}).items() if k not in META_DROP}}
                      for d, info in raw["ds_info"].items()}
    out["variants"] = raw["variants"]
    out["grid"] = {"datasets": datasets, "methods": main, "variants": list(variants), "seeds": seeds}
    return out


def _read(path: Path) -> dict:
    try:
        obj = read_json(path)
    except (OSError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).parent)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def without_recorded(rec: dict, held: dict | None) -> tuple[dict, list[str]]:
    """``rec`` (runs_from_results) less the finished runs the study's other parts already hold
    (``held``: their merge), after checking that each is the same run: the same config hash and
    data identity and the same final numbers. Returns the rest and the runs left out; a run that
    differs from its recorded self is refused, naming it (a rerun is not a duplicate to drop)."""
    if held is None:
        return rec, []
    both = sorted(set(finished_runs(held)) & set(finished_runs(rec)))
    if not both:
        return rec, []

    def ident(frame: pd.DataFrame, key) -> tuple:
        return tuple(provenance_of(frame, key, c) for c in ("config_hash", "data_identity"))

    for key in both:
        name = run_name(key)
        a, b = ident(held["provenance"], key), ident(rec["provenance"], key)
        if a != b:
            raise RecordError(f"run {name} is recorded with config hash / data identity {a[0]} / {a[1]}, "
                              f"and this folder's run has {b[0]} / {b[1]}: it is another run of that name, "
                              "not one to skip; record it as another study or remove the recorded part")
        diff = differing(run_numbers(held["values"], key), run_numbers(rec["values"], key))[:3]
        if diff:
            cpus = [provenance_of(held["provenance"], key, "cpu"), provenance_of(rec["provenance"], key, "cpu")]
            where = (f" (recorded from a run on {cpus[0]}, this folder's ran on {cpus[1]}: another CPU can "
                     "round floats otherwise)" if all(cpus) and cpus[0] != cpus[1] else "")
            raise RecordError(f"run {name} is recorded with other numbers than this folder's ({', '.join(diff)}): "
                              f"it was retrained or evaluated anew{where}; record it as another study or remove "
                              "the recorded part")
    return select_runs(rec, both, keep=False), [run_name(k) for k in both]


def record_of(results: str | Path, held: dict | None = None, cpu: str | None = None) -> tuple[dict, list[str]]:
    """The record of the results folder ``results`` (runs_from_results) less the runs the study's
    other parts hold (``held``: :func:`without_recorded`), and those left out; refuses a record of
    no finished run."""
    rec, skipped = without_recorded(runs_from_results(results, cpu=cpu), held)
    if not finished_runs(rec):
        # a part of unfinished runs only would say nothing but "missing": not a record
        if skipped:
            raise RecordError(f"{results}: every finished run is in the study already: nothing new to record")
        raise RecordError(f"{results}: no run in it has finished ({len(rec['runs'])} still training or "
                          "missing): nothing to record")
    return rec, skipped


def write_part(rec: dict, part_dir: str | Path, study: str, command: str = "", part: str | None = None) -> Path:
    """Write the record ``rec`` (:func:`record_of`, or a merge) into ``part_dir`` as part ``part``
    (default: the folder's name) of study ``study``. The manifest notes the runs whose CPU was
    declared at record time (``cpu_declared``) and those carried over from a part it replaced
    (``carried``), where there are any."""
    part_dir = Path(part_dir)
    part_dir.mkdir(parents=True, exist_ok=True)
    files = {f"{name}.csv.gz": _csv_bytes(rec[name]) for name in (*FRAMES, "provenance")}
    files["configs.json.gz"] = _json_bytes(rec["configs"])
    # variants as [name, info] pairs: their order is the ablation table's order
    files["datasets.json.gz"] = _json_bytes({"ds_info": rec["ds_info"],
                                             "variants": [[k, v] for k, v in rec["variants"].items()]})
    for name, data in files.items():
        tmp = part_dir / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(part_dir / name)
    runs = rec["runs"]
    manifest = {"schema_version": SCHEMA_VERSION, "study": study, "part": part or part_dir.name,
                "grid": rec["grid"], "n_runs": int(len(runs)),
                "n_ok": int((runs.status == "ok").sum()), "n_diverged": int((runs.status == "diverged").sum()),
                "commit": _git_commit(), "recorded_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "command": command, "machine": f"{socket.gethostname()} {platform.platform()}",
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}}
    held = {run_name(k) for k in finished_runs(rec)}
    declared = {c: sorted(set(names) & held) for c, names in (rec.get("cpu_declared") or {}).items()}
    if any(declared.values()):  # the runs whose CPU --cpu declared (their env.json recorded none)
        manifest["cpu_declared"] = {c: names for c, names in declared.items() if names}
    if rec.get("carried"):  # runs of the part this one replaced, which its results folder lacked
        manifest["carried"] = list(rec["carried"])
    write_json_atomic(part_dir / MANIFEST, manifest)  # last: a part without it is not a record
    return part_dir


def write_record(results: str | Path, part_dir: str | Path, study: str, command: str = "",
                 held: dict | None = None, cpu: str | None = None) -> Path:
    """Record the results folder ``results`` into ``part_dir`` (one part of study ``study``);
    with ``held`` (the merge of the study's other parts), its runs that those parts already hold
    are left out (:func:`without_recorded`); ``cpu``: :func:`runs_from_results`."""
    return write_part(record_of(results, held, cpu)[0], part_dir, study, command)


# --------------------------------------------------------------------------- reading
def read_part(part_dir: str | Path) -> dict:
    """One recorded part, every file checked against its manifest."""
    part_dir = Path(part_dir)
    mpath = part_dir / MANIFEST
    try:
        manifest = read_json(mpath)
    except (OSError, ValueError) as e:
        raise RecordError(f"study record {part_dir}: {MANIFEST} unreadable ({e})") from e
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise RecordError(f"study record {part_dir}: schema version {version!r}; this version of the "
                          f"package reads version {SCHEMA_VERSION} (record it again with this version, "
                          f"or read it with the version that wrote it, commit {manifest.get('commit')})")
    blobs = {}
    for name, want in manifest.get("files", {}).items():
        path = part_dir / name
        try:
            data = path.read_bytes()
        except OSError as e:
            raise RecordError(f"study record file {path} is missing or unreadable ({e})") from e
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            raise RecordError(f"study record file {path} was changed after it was recorded (sha256 {got}, "
                              f"{MANIFEST} records {want}): restore it (git checkout) or record the "
                              f"study again")
        blobs[name] = gzip.decompress(data)
    need = {f"{n}.csv.gz" for n in (*FRAMES, "provenance")} | {"configs.json.gz", "datasets.json.gz"}
    if need - set(blobs):
        raise RecordError(f"study record {part_dir}: {MANIFEST} lists no {', '.join(sorted(need - set(blobs)))}")
    out: dict[str, Any] = {"manifest": manifest, "part": str(part_dir)}
    for name in (*FRAMES, "provenance"):
        text = blobs[f"{name}.csv.gz"].decode("utf-8")
        out[name] = pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame()
    prov = out["provenance"]
    if not prov.empty and "cpu" not in prov.columns:
        # a part recorded before runs wrote their CPU (env.json "cpu"): unknown
        prov.insert(list(prov.columns).index("platform") + 1 if "platform" in prov.columns else len(prov.columns),
                    "cpu", None)
    out["configs"] = json.loads(blobs["configs.json.gz"])
    info = json.loads(blobs["datasets.json.gz"])
    out["ds_info"], out["variants"] = info["ds_info"], {k: v for k, v in info["variants"]}
    return out


#: what stands for a distilled run's teacher hash in its identity: the teacher is the study's
#: teacher run of the same seed, so its hash differs from seed to seed (merge checks it is that run)
SAME_SEED_TEACHER = "<the teacher run of this seed>"


def _identity_of(cfg: dict) -> dict:
    """What two runs of one study share: their recorded config less its paths and the seed."""
    ident = {k: v for k, v in _strip_paths(cfg).items() if k != "seed"}
    if isinstance(ident.get("distill"), dict) and "teacher_config_hash" in ident["distill"]:
        ident["distill"] = {**ident["distill"], "teacher_config_hash": SAME_SEED_TEACHER}
    return ident


def _check_teachers(parts: Sequence[dict]) -> None:
    """A distilled run's teacher is the study's teacher run of its seed, as that run is recorded
    (a teacher retrained after its student would leave the student's number stale)."""
    hash_of = {(p.dataset, p.method, int(p.seed)): p.config_hash for part in parts
               for p in part["provenance"].itertuples(index=False) if isinstance(p.config_hash, str)}
    for part in parts:
        for key, cfg in part["configs"].items():
            distill = cfg.get("distill")
            if not isinstance(distill, dict) or not distill.get("teacher_config_hash"):
                continue
            dataset, _, seed = key.split("/")
            teacher = (dataset, distill.get("teacher"), int(seed.removeprefix("seed")))
            recorded = hash_of.get(teacher)
            if recorded is not None and recorded != distill["teacher_config_hash"]:
                raise RecordError(f"{part['part']}: {key} was distilled from a teacher of config hash "
                                  f"{distill['teacher_config_hash']}, but the study's {teacher[0]}/{teacher[1]}/"
                                  f"seed{teacher[2]} is recorded with {recorded}: the teacher was retrained "
                                  f"after its student; retrain the student")


def _diff(a: dict, b: dict, prefix: str = "") -> list[str]:
    keys = sorted(set(a) | set(b))
    out = []
    for k in keys:
        va, vb = a.get(k), b.get(k)
        if isinstance(va, dict) and isinstance(vb, dict):
            out += _diff(va, vb, f"{prefix}{k}.")
        elif va != vb:
            out.append(f"{prefix}{k}: {va!r} vs {vb!r}")
    return out


def _refuse_duplicate(key, first: dict, second: dict) -> None:
    """Two parts of one study hold run ``key``: the same run twice, or two that differ."""
    diff = differences(first, second, key)
    where = f"run {run_name(key)} is in two parts of the study ({first['part']} and {second['part']})"
    if diff:
        raise RecordError(f"{where} and differs between them ({'; '.join(diff[:3])}): it was retrained or "
                          "evaluated anew; keep the part whose run is to count and record the other again "
                          "without it (a run is never counted twice)")
    raise RecordError(f"{where}, the same run twice (duplicate): keep one (a duplicate is never counted twice)")


def merge(parts: Sequence[dict]) -> dict:
    """The parts of one study as one set of per-run frames; refuses duplicates, config differences
    other than the seed, and runs of different training code."""
    if not parts:
        raise RecordError("no recorded part to read")
    seen: dict[tuple, dict] = {}
    config_of: dict[tuple, tuple[str, dict]] = {}
    code_of: dict[str, str] = {}
    # a run one part lacks (missing, stale) and another part finished: the finished one counts
    finished_in = {(r.dataset, r.method, int(r.seed)): part["part"] for part in parts
                   for r in part["runs"].itertuples(index=False) if r.status in FINISHED}
    for part in parts:
        for r in part["runs"].itertuples(index=False):
            key = (r.dataset, r.method, int(r.seed))
            if r.status not in FINISHED:
                continue
            if key in seen:
                _refuse_duplicate(key, seen[key], part)
            seen[key] = part
            cfg = part["configs"].get(f"{r.dataset}/{r.method}/seed{int(r.seed)}")
            if cfg is not None:
                ident = _identity_of(cfg)
                prev = config_of.setdefault((r.dataset, r.method), (f"{part['part']} seed{int(r.seed)}", ident))
                if prev[1] != ident:
                    raise RecordError(f"runs of {r.dataset}/{r.method} differ in more than the seed ({prev[0]} vs "
                                      f"{part['part']} seed{int(r.seed)}): " + "; ".join(_diff(prev[1], ident)[:5]))
        for p in part["provenance"].itertuples(index=False):
            code = p.training_code if isinstance(p.training_code, str) else None
            if code:
                where = f"{part['part']}: {p.dataset}/{p.method}/seed{int(p.seed)} (commit {p.git_commit})"
                first = code_of.setdefault(code, where)
                others = [w for c, w in code_of.items() if c != code]
                if others:
                    raise RecordError(f"runs trained by different code (training-code digest) cannot be one "
                                      f"study: {others[0]} and {first}; record them as separate studies")
    _check_teachers(parts)
    out: dict[str, Any] = {}
    for name in (*FRAMES, "provenance"):
        frames = []
        for p in parts:
            df = p[name]
            if name == "runs" and not df.empty:  # drop the unfinished rows another part finished
                done = [finished_in.get((d, m, int(sd)), p["part"]) == p["part"] or st in FINISHED
                        for d, m, sd, st in zip(df.dataset, df.method, df.seed, df.status)]
                df = df[done]
                # and the unfinished row of one run met in two parts: once
                df = df[~df.duplicated(["dataset", "method", "seed"])]
            if not df.empty:
                frames.append(df)
        merged = pd.concat(frames, ignore_index=True) if frames else parts[0][name]
        if name == "runs" and not merged.empty:
            merged = merged[~merged.duplicated(["dataset", "method", "seed"])].reset_index(drop=True)
        out[name] = merged
    grid = _merged_grid([p["manifest"]["grid"] for p in parts])
    if len(parts) > 1:  # one part's row order: dataset, method, seed as the grid lists them
        rank_d = {d: i for i, d in enumerate(grid["datasets"])}
        rank_m = {m: i for i, m in enumerate(grid["methods"] + grid["variants"])}
        for name in (*FRAMES, "provenance"):
            df = out[name]
            if not df.empty and {"dataset", "method", "seed"} <= set(df.columns):
                keys = [(rank_d.get(d, len(rank_d)), rank_m.get(m, len(rank_m)), int(s))
                        for d, m, s in zip(df["dataset"], df["method"], df["seed"])]
                order = sorted(range(len(df)), key=keys.__getitem__)
                out[name] = df.iloc[order].reset_index(drop=True)
    out["configs"] = {k: v for p in parts for k, v in p["configs"].items()}
    out["ds_info"] = {}
    for p in parts:
        for d, info in p["ds_info"].items():
            out["ds_info"].setdefault(d, info)
    out["variants"] = {k: v for p in parts for k, v in p["variants"].items()}
    out["grid"] = grid
    out["manifests"] = [p["manifest"] for p in parts]
    # every part read and its finished runs (the findings page lists them: nothing it reads is unseen)
    out["parts"] = [(Path(p["part"]).name, len(finished_runs(p))) for p in parts]
    return out


def _merged_grid(grids: list[dict]) -> dict:
    """The grid of several parts: datasets and variants as they first appear, seeds sorted, and the
    methods in the registry's order (config.yaml's), whichever part trained a method first (a
    study's last sitting, e.g. unfrozen AutoNorm, would otherwise put its method last)."""
    from autonorm.methods import METHODS

    out = {key: list(dict.fromkeys(x for g in grids for x in g[key]))
           for key in ("datasets", "methods", "variants", "seeds")}
    rank = {m: i for i, m in enumerate(METHODS)}
    out["methods"] = sorted(out["methods"], key=lambda m: rank.get(m, len(rank)))  # stable for the unknown
    out["seeds"] = sorted(out["seeds"])
    return out


def tables_of(study: dict, reference: str | Path | None = None,
              reference_method: str = "autonorm_s") -> dict[str, pd.DataFrame]:
    """The tables of the aggregate step, computed from a record exactly as from a results folder."""
    from autonorm.analysis.aggregate import tables_from_runs

    grid = study["grid"]
    return tables_from_runs(study, grid["methods"], grid["variants"], reference, reference_method)
