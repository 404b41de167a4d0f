"""Study folders: what a folder under ``studies/`` may hold, and a run counted once across studies.

A study folder holds its parts (sub-folders, each with a ``manifest.json``), a README and, where
the study repeats runs of another study, a ``study.json`` declaring it; nothing the page would read
without a word:

- record files (``*.csv.gz``, ``configs.json.gz``, ``datasets.json.gz``, ``manifest.json``) directly
  in a study folder (a part's files copied beside its part folders) are refused, naming the folder;
- a sub-folder with record files and no manifest (a part whose manifest was lost) is refused;
- a manifest that records another study or part than the folders it sits in (a part or a whole
  study copied under another name) is refused, naming both;
- the same run (config hash, data identity, seed) in two studies is refused when the page reads
  them together, naming both studies and the run, unless one study declares the other as its
  source in its ``study.json``: ``{"sources": ["mnist_regime"]}``. The declaring study's repeated
  runs are then counted once, in the source: the page lists the study, its parts and its "how far"
  row as recorded, and judges the claims and draws the figures from it without those runs
  (:meth:`Recorded.counted`).

A ``study.json`` may also hold the study's plan, the seeds it fixed before its first run
(``{"planned_seeds": 5}``, as its README states it): the page decides the study's rows only once
that many seeds of each method a row reads are recorded.

And where the study's runs trained on two CPU types, the check that lets the page pair them: one recorded
run trained again on the other CPU, whose per-epoch losses equal the record's to every digit
(``{"same_floats": [{"run": "mnist/frozen_ln/seed0", "cpu": "<the other CPU>", "epochs": [{"epoch": 1,
"train_loss": ..., "val_loss": ...}]}]}``, written by ``python -m autonorm.analysis.same_floats``); a
declaration whose numbers differ from the record is refused, naming the epoch and the number.

Other files (a README, notes) are left alone. A study folder with no part yet is no study record
(the page skips it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from autonorm.analysis.record_runs import (FRAMES, differences, finished_runs, parse_run, provenance_of, run_name,
                                          select_runs)
from autonorm.analysis.records import MANIFEST, RecordError, merge, read_part
from autonorm.io_utils import read_json

#: the files a record is made of (manifest.json and what it lists)
RECORD_SUFFIXES = (".csv.gz", "configs.json.gz", "datasets.json.gz", MANIFEST)
#: a study's declaration of the studies whose runs it repeats
DECLARATION = "study.json"


def record_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and p.name.endswith(RECORD_SUFFIXES))


def parts_of(study_dir: str | Path, skip: Sequence[str] = ()) -> list[Path]:
    """The recorded parts of a study folder: its sub-folders with a manifest (in name order; a
    folder whose name starts with "." is a part being written, and ``skip`` names parts not to
    look at). Record files directly in the folder, or in a sub-folder without a manifest, are
    refused: read as they are, they would be a study of one part or a part that is not counted."""
    study_dir = Path(study_dir)
    if not study_dir.is_dir():
        return []
    loose = record_files(study_dir)
    if loose:
        raise RecordError(f"{study_dir}: record files directly in the study folder ({', '.join(loose)}): a study "
                          f"folder holds parts (sub-folders with a {MANIFEST}) and a README; move them back into "
                          "their part folder (git checkout restores a committed one) or record the part again")
    parts = []
    for sub in sorted(p for p in study_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if sub.name in skip:
            continue
        if (sub / MANIFEST).is_file():
            parts.append(sub)
        elif files := record_files(sub):
            raise RecordError(f"{sub}: record files ({', '.join(files)}) and no {MANIFEST}, so its runs would not "
                              f"be counted: restore the manifest (git checkout -- '{sub / MANIFEST}') or record "
                              f"the part again (autonorm-report --record {study_dir.name} --results FOLDER "
                              f"--part {sub.name} --replace)")
    return parts


def read_checked_part(path: str | Path) -> dict:
    """One part (records.read_part), checked to record the study and part whose folders it sits in."""
    path = Path(path)
    part = read_part(path)
    got = (part["manifest"].get("study"), part["manifest"].get("part"))
    here = (path.resolve().parent.name, path.resolve().name)
    if got != here:
        raise RecordError(f"{path / MANIFEST} records study {got[0]!r}, part {got[1]!r}, but sits in study "
                          f"folder {here[0]!r}, part folder {here[1]!r}: a part or study copied or renamed by "
                          f"hand; move it back to {got[0]}/{got[1]}, or record it again into this study")
    return part


def read_parts(study_dir: str | Path, skip: Sequence[str] = ()) -> list[dict]:
    """Every part of a study folder (:func:`parts_of`), read and checked (:func:`read_checked_part`)."""
    return [read_checked_part(path) for path in parts_of(study_dir, skip)]


def load_study(study_dir: str | Path) -> dict:
    """A study folder's parts merged (records.merge)."""
    parts = read_parts(study_dir)
    if not parts:
        raise RecordError(f"{study_dir}: no study record (no sub-folder with a {MANIFEST})")
    return merge(parts)


#: what a study.json may hold: the studies it repeats runs of, the methods it pairs with from one of
#: them, and the seeds its plan fixed before its first run (the page decides its rows at that many)
DECLARATION_KEYS = ("sources", "baseline", "planned_seeds", "same_floats")


def _declaration(study_dir: str | Path) -> tuple[Path, dict | None]:
    """(the path of a study folder's ``study.json``, what it holds; None where there is none)."""
    path = Path(study_dir) / DECLARATION
    if not path.is_file():
        return path, None
    try:
        obj = read_json(path)
    except (OSError, ValueError) as e:
        raise RecordError(f"{path} is unreadable ({e})") from e
    if not isinstance(obj, dict):
        raise RecordError(f"{path}: expected a JSON object with some of {', '.join(DECLARATION_KEYS)}; it holds {obj!r}")
    unknown = sorted(set(obj) - set(DECLARATION_KEYS))
    if unknown:
        raise RecordError(f"{path}: unknown key(s) {', '.join(unknown)}; a study.json holds "
                          f"{', '.join(DECLARATION_KEYS)}")
    return path, obj


def planned_seeds_of(study_dir: str | Path) -> int:
    """The number of seeds a study's plan fixed before its first run (``"planned_seeds": 5`` in its
    ``study.json``, as its README states the plan); 0 where it declares none."""
    return _planned_seeds(*_declaration(study_dir))


def _planned_seeds(path: Path, obj: dict | None) -> int:
    """:func:`planned_seeds_of` from a study.json already read (:func:`_declaration`)."""
    if obj is None or "planned_seeds" not in obj:
        return 0
    n = obj["planned_seeds"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RecordError(f'{path}: "planned_seeds" must be a whole number of seeds (at least 1); it holds {n!r}')
    return n


def declaration_of(study_dir: str | Path) -> tuple[list[str], dict | None]:
    """What a study folder declares in its ``study.json``: the studies it repeats runs of
    (``"sources": [...]``, each a study folder beside it) and, optionally, the methods it takes from
    one of them to pair with (``"baseline": {"study": "mnist_regime", "methods": ["frozen_ln"]}``);
    a study.json that holds only its plan (:func:`planned_seeds_of`) declares no source."""
    return _sources_and_baseline(Path(study_dir), *_declaration(study_dir))


def _sources_and_baseline(study_dir: Path, path: Path, obj: dict | None) -> tuple[list[str], dict | None]:
    """:func:`declaration_of` from a study.json already read (:func:`_declaration`)."""
    if obj is None or not ({"sources", "baseline"} & set(obj)):
        return [], None
    sources = obj.get("sources")
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) and s for s in sources):
        raise RecordError(f'{path}: expected {{"sources": ["<study>", ...]}}, the studies whose runs this one '
                          f"repeats; it holds {obj!r}")
    for src in sources:
        if src == study_dir.resolve().name or not (study_dir.parent / src).is_dir():
            raise RecordError(f"{path} declares the source {src!r}, which is no other study folder beside it")
    baseline = obj.get("baseline")
    if baseline is not None and not (isinstance(baseline, dict) and baseline.get("study") in sources
                                     and isinstance(baseline.get("methods"), list) and baseline["methods"]
                                     and all(isinstance(m, str) for m in baseline["methods"])):
        raise RecordError(f'{path}: "baseline" must be {{"study": <one of its sources>, "methods": [...]}}; '
                          f"it holds {baseline!r}")
    return sources, baseline


def sources_of(study_dir: str | Path) -> list[str]:
    """The studies a study folder declares it repeats runs of (:func:`declaration_of`)."""
    return declaration_of(study_dir)[0]


def study_folders(studies_dir: str | Path) -> list[Path]:
    """The study folders under ``studies_dir`` that hold recorded parts (each checked:
    :func:`parts_of`), in name order; record files directly in ``studies_dir`` are refused."""
    studies_dir = Path(studies_dir)
    if not studies_dir.is_dir():
        return []
    loose = record_files(studies_dir)
    if loose:
        raise RecordError(f"{studies_dir}: record files directly in it ({', '.join(loose)}): records live in "
                          f"{studies_dir}/<study>/<part>/; move them back or record the part again")
    return [p for p in sorted(studies_dir.iterdir()) if p.is_dir() and parts_of(p)]


@dataclass
class Recorded:
    """A study record as the findings page reads it; ``repeats``: its runs that are another study's
    (declared), as (its run, the study the run counts in, that study's run); ``repeat_differences``:
    how each repeat differs from its source's run (empty: the same numbers, times aside);
    ``baseline``: the methods it pairs with from a source (study.json)."""
    name: str
    folder: Path
    record: dict
    sources: list[str] = field(default_factory=list)
    repeats: list[tuple[str, str, str]] = field(default_factory=list)
    repeat_differences: dict[str, list[str]] = field(default_factory=dict)
    baseline: dict | None = None
    planned_seeds: int = 0  # the seeds its plan fixed (study.json); 0: none declared
    same_floats: list[dict] = field(default_factory=list)  # cross-CPU checks (study.json), checked

    def counted(self) -> dict | None:
        """The record less its repeated runs (the claims and figures read this); None when no
        finished run is left."""
        if not self.repeats:
            return self.record
        rec = select_runs(self.record, [parse_run(r[0]) for r in self.repeats], keep=False)
        if not finished_runs(rec):
            return None
        return _with_grid_of(rec, self.record["grid"])

    def judged(self, by_name: dict[str, "Recorded"]) -> dict | None:
        """What the claims and figures read: :meth:`counted`, plus the baseline's runs of the declared
        methods from its source. Another study's runs are paired with this one's only where this study
        repeats one of them and the repeat has the same numbers (the two codes compute the method
        alike, shown on a run); else refused."""
        rec = self.counted()
        if not self.baseline or rec is None:
            return rec
        src = by_name.get(self.baseline["study"])
        if src is None:
            raise RecordError(f"{self.folder / DECLARATION}: its baseline study {self.baseline['study']!r} is not "
                              "read with it; read both (autonorm-report --findings reads every study)")
        for m in self.baseline["methods"]:
            shown = [r for r, *_ in self.repeats if parse_run(r)[1] == m]
            if not shown:
                raise RecordError(f"{self.folder / DECLARATION}: it pairs with {src.name}'s {m} runs, but repeats none "
                                  f"of them, so nothing shows that its code computes {m} as {src.name}'s did: train "
                                  f"one {m} run of {src.name}'s in this study, or train {m} here")
            bad = [(r, self.repeat_differences[r]) for r in shown if self.repeat_differences.get(r)]
            if bad:
                raise RecordError(f"{self.folder / DECLARATION}: it pairs with {src.name}'s {m} runs, but its repeat "
                                  f"{bad[0][0]} differs from {src.name}'s ({'; '.join(bad[0][1][:3])}): the two codes "
                                  f"do not compute {m} alike; train {m} in this study")
        keys = [k for k in finished_runs(src.record) if k[1] in self.baseline["methods"]]
        borrowed = select_runs(src.record, keys, keep=True)
        own = rec["runs"]  # its own rows of those methods (unfinished ones): the source's replace them
        rec = select_runs(rec, [(d, m, sd) for d, m, sd in zip(own.dataset, own.method, own.seed)
                                if m in self.baseline["methods"]], keep=False)
        out = dict(rec)
        for name in (*FRAMES, "provenance"):
            out[name] = pd.concat([f for f in (rec[name], borrowed[name]) if not f.empty] or [rec[name]],
                                  ignore_index=True)
        out["configs"] = {**rec["configs"], **borrowed["configs"]}
        out["ds_info"] = {**borrowed.get("ds_info", {}), **rec.get("ds_info", {})}
        grid = dict(rec["grid"])
        grid["methods"] = list(dict.fromkeys(grid["methods"] + list(self.baseline["methods"])))
        grid["seeds"] = sorted(set(grid["seeds"]) | {k[2] for k in keys})
        out["grid"] = grid
        return out


def _with_grid_of(rec: dict, grid: dict) -> dict:
    """``rec`` with the grid narrowed to the runs it holds."""
    runs = rec["runs"]
    rec["grid"] = {"datasets": [d for d in grid["datasets"] if d in set(runs.dataset)],
                   "methods": [m for m in grid["methods"] if m in set(runs.method)],
                   "variants": [v for v in grid["variants"] if v in set(runs.method)],
                   "seeds": [s for s in grid["seeds"] if s in set(runs.seed.astype(int))]}
    return rec


def _identities(rec: dict) -> dict[tuple, list[tuple[str, str, int]]]:
    """The finished runs of a record by identity: (config hash, data identity, seed); a run that
    records no config hash cannot be matched and is left out."""
    out: dict[tuple, list] = {}
    prov = rec["provenance"]
    for p in prov.itertuples(index=False) if not prov.empty else []:
        if isinstance(p.config_hash, str) and p.config_hash:
            data = p.data_identity if isinstance(p.data_identity, str) else ""
            out.setdefault((p.config_hash, data, int(p.seed)), []).append((p.dataset, p.method, int(p.seed)))
    return out


def _training_code(rec: dict, key) -> str | None:
    prov = rec["provenance"]
    row = prov[(prov.dataset == key[0]) & (prov.method == key[1]) & (prov.seed == key[2])]
    code = row["training_code"].iloc[0] if len(row) else None
    return None if pd.isna(code) else str(code)


def _refuse_shared(a: Recorded, b: Recorded, ident: tuple, key_a, key_b, n_more: int) -> None:
    codes = [_training_code(a.record, key_a), _training_code(b.record, key_b)]
    code = f"; trained twice, by training code {codes[0][:8]} and {codes[1][:8]}" \
        if all(codes) and codes[0] != codes[1] else ""
    diff = differences(a.record, b.record, key_a, key_b)
    differs = f", and differs between them ({'; '.join(diff[:3])})" if diff else ""
    more = f" (and {n_more} more runs the two studies share)" if n_more else ""
    raise RecordError(f"run {run_name(key_a)} of study {a.name} and run {run_name(key_b)} of study {b.name} are "
                      f"the same run (config hash {ident[0]}, data identity {ident[1] or 'unknown'}, seed "
                      f"{ident[2]}{code}){differs}{more}: a run counts once; remove one study's copy, or, if {b.name} "
                      f"repeats {a.name}'s runs, declare it in {(b.folder / DECLARATION).as_posix()}: "
                      f'{{"sources": ["{a.name}"]}}')


def _cpu_of(rec: dict, key) -> str:
    prov = rec["provenance"]
    if prov.empty or "cpu" not in prov:
        return ""
    row = prov[(prov.dataset == key[0]) & (prov.method == key[1]) & (prov.seed == key[2])]
    cpu = row["cpu"].iloc[0] if len(row) else None
    return str(cpu).strip() if isinstance(cpu, str) else ""


def _two_trainings(holders: list) -> bool:
    """Whether studies holding one run identity (config, data, seed) hold two trainings of it: each names its
    CPU, the CPUs differ, and so do the numbers: the final metrics, or the per-epoch losses (two trainings may
    round to one test accuracy on 10,000 images and still part in a loss's eighth digit). Two CPU types may round
    floats apart, so one config trains to other numbers on each (docs/method.md section 11); such runs are not one
    run read twice, and each counts in its own study (which pairs only runs of one CPU type, or of types its
    same-floats check joins). The same numbers are the same run, whatever the CPUs; other numbers on one CPU are
    refused."""
    (a, ka), *rest = holders
    cpu_a = _cpu_of(a.record, ka)
    for b, kb in rest:
        cpu_b = _cpu_of(b.record, kb)
        if not (cpu_a and cpu_b) or cpu_a == cpu_b or not (differences(a.record, b.record, ka, kb)
                                                           or history_differences(a.record, b.record, ka, kb)):
            return False
    return True


def _count_once(studies: Sequence[Recorded]) -> None:
    """Fill each study's ``repeats``; refuse a run held by two studies neither of which declares
    the other (or each of which declares the other) as its source."""
    held: dict[tuple, list[tuple[Recorded, tuple]]] = {}
    for st in studies:
        for ident, keys in _identities(st.record).items():
            held.setdefault(ident, []).append((st, keys[0]))
    shared = {ident: hs for ident, hs in held.items() if len(hs) > 1 and not _two_trainings(hs)}
    for ident, holders in shared.items():
        names = {st.folder.resolve().name for st, _ in holders}
        declared = [(st, key) for st, key in holders if set(st.sources) & (names - {st.folder.resolve().name})]
        counted = [(st, key) for st, key in holders if all(st is not d for d, _ in declared)]
        if len(counted) > 1:
            (a, ka), (b, kb) = counted[:2]
            n_more = sum(1 for hs in shared.values() if {id(a), id(b)} <= {id(s) for s, _ in hs}) - 1
            _refuse_shared(a, b, ident, ka, kb, n_more)
        if not counted:
            (a, ka), (b, kb) = holders[:2]
            raise RecordError(f"studies {a.name} and {b.name} declare each other as their source "
                              f"({DECLARATION}) and share run {run_name(ka)}: the run must count in one of "
                              "them; keep one declaration")
        source, skey = counted[0]
        for st, _ in declared:
            for key in _identities(st.record)[ident]:
                st.repeats.append((run_name(key), source.name, run_name(skey)))
                st.repeat_differences[run_name(key)] = differences(st.record, source.record, key, skey) \
                    + history_differences(st.record, source.record, key, skey)


def load_studies(named: Sequence[tuple[str, str | Path]]) -> list[Recorded]:
    """The study records ``named`` ((name, folder), in the page's order), each loaded and the
    runs they share counted once (:func:`_count_once`)."""
    studies = []
    for name, folder in named:
        declared = _declaration(folder)  # study.json read once a study, not once a field
        sources, baseline = _sources_and_baseline(Path(folder), *declared)
        record = load_study(folder)
        studies.append(Recorded(name, Path(folder), record, sources, baseline=baseline,
                                planned_seeds=_planned_seeds(*declared),
                                same_floats=_same_floats(*declared, record)))
    _count_once(studies)
    return studies


#: the per-epoch numbers a same-floats check compares (the losses: every digit of a float the run computed)
SAME_FLOATS_NUMBERS = ("train_loss", "val_loss")


def same_floats_mismatches(record: dict, key, epochs: Sequence[dict]) -> list[str]:
    """Where ``epochs`` (per-epoch numbers of run ``key`` trained again, as history.json holds them)
    differ from the record's history of that run: ["epoch 1 train_loss 2.1358 (recorded 2.1359)"];
    an epoch the record lacks is a difference too."""
    h = record["history"]
    h = h[(h.dataset == key[0]) & (h.method == key[1]) & (h.seed == key[2])].set_index("epoch")
    out = []
    for e in epochs:
        if e["epoch"] not in h.index:
            out.append(f"epoch {e['epoch']}: not in the record")
            continue
        out += [f"epoch {e['epoch']} {n} {e[n]!r} (recorded {float(h.at[e['epoch'], n])!r})"
                for n in SAME_FLOATS_NUMBERS if float(h.at[e["epoch"], n]) != float(e[n])]
    return out


def _same_floats(path: Path, obj: dict | None, record: dict) -> list[dict]:
    """A study.json's same-floats checks, each refused unless its run is recorded on another CPU than the
    one it names and its numbers equal the record's (:func:`same_floats_mismatches`)."""
    checks = [] if obj is None else obj.get("same_floats", [])
    shape = ('"same_floats" is a list of {"run": "dataset/method/seedK", "cpu": "<the CPU it trained on '
             'again>", "epochs": [{"epoch": 1, "train_loss": <float>, "val_loss": <float>}, ...]}')
    if not isinstance(checks, list):
        raise RecordError(f"{path}: {shape}; it holds {checks!r}")
    for c in checks:
        ok = (isinstance(c, dict) and set(c) == {"run", "cpu", "epochs"} and isinstance(c["cpu"], str)
              and c["cpu"] and isinstance(c["epochs"], list) and c["epochs"]
              and all(isinstance(e, dict) and set(e) == {"epoch", *SAME_FLOATS_NUMBERS}
                      and isinstance(e["epoch"], int) and not isinstance(e["epoch"], bool)
                      and all(isinstance(e[n], float) for n in SAME_FLOATS_NUMBERS) for e in c["epochs"]))
        key = parse_run(c["run"]) if ok and isinstance(c["run"], str) else None
        if key is None:
            raise RecordError(f"{path}: {shape}; one entry holds {c!r}")
        if key not in finished_runs(record):
            raise RecordError(f"{path}: same_floats checks run {c['run']}, which the study's record does not hold")
        recorded_cpu = provenance_of(record["provenance"], key, "cpu")
        if recorded_cpu in (None, c["cpu"]):
            raise RecordError(f"{path}: same_floats checks run {c['run']} on {c['cpu']!r}, but the record names "
                              f"{recorded_cpu or 'no CPU'} for it: the check compares two CPU types")
        bad = same_floats_mismatches(record, key, c["epochs"])
        if bad:
            raise RecordError(f"{path}: same_floats: run {c['run']} trained again on {c['cpu']!r} differs from "
                              f"the record ({'; '.join(bad[:3])}): the two CPUs do not train it to the same "
                              "floats; remove the entry")
    _refuse_unchecked_cpus(path, record, checks)
    return checks


def _refuse_unchecked_cpus(path: Path, record: dict, checks: list[dict]) -> None:
    """Runs that name two CPU types are paired only where same-floats checks join the types: else refused.
    (Runs of older code that name no CPU are left to the page's caveat: their study's README names the
    machine.)"""
    prov = record["provenance"]
    _refuse_mixed_threads(path, prov)
    if prov.empty or "cpu" not in prov:
        return
    named = prov["cpu"].dropna().astype(str)
    named = named[named.str.strip() != ""]
    types = named.value_counts()
    if len(types) < 2:
        return
    groups: list[set] = []
    for c in checks:
        group = {provenance_of(prov, parse_run(c["run"]), "cpu"), c["cpu"]}
        for g in [g for g in groups if g & group]:
            groups.remove(g)
            group |= g
        groups.append(group)
    if not any(set(types.index) <= g for g in groups):
        shown = ", ".join(f"{c!r} ({n} runs)" for c, n in types.items())
        raise RecordError(f"{path.parent.name}: its runs trained on CPU types {shown}, and no same_floats check in "
                          f"{path} joins them, so a paired difference across them may carry the machines' float "
                          "rounding: train one recorded run again on the other CPU for an epoch and declare the "
                          "check (python -m autonorm.analysis.same_floats STUDY RUN RUN_FOLDER), or record those "
                          "runs as a study of their own")


def _refuse_mixed_threads(path: Path, prov: pd.DataFrame) -> None:
    """Runs trained at two thread counts are refused: the count is an execution setting outside a run's
    identity, but one CPU rounds floats differently at one and at two threads (benchmarks/LOG.md section 31),
    as two CPU types do, and no same-floats check joins thread counts."""
    if prov.empty or "torch_threads" not in prov:
        return
    counts = prov["torch_threads"].dropna().astype(int).value_counts().sort_index()
    if len(counts) > 1:
        shown = ", ".join(f"{t} ({n} runs)" for t, n in counts.items())
        raise RecordError(f"{path.parent.name}: its runs trained at {shown} threads: a CPU rounds floats "
                          "differently at another thread count, so a paired difference across them may carry the "
                          "rounding; train them at one count, or record those runs as a study of their own")


#: a run's per-epoch numbers compared between a repeat and its source (not the measured times)
HISTORY_NUMBERS = ("train_loss", "val_loss", "val_metric", "mean_entropy", "mean_w_dyt")


def history_differences(a: dict, b: dict, key_a, key_b) -> list[str]:
    """The epochs at which run ``key_a`` of ``a`` and ``key_b`` of ``b`` differ in a per-epoch
    number (:data:`HISTORY_NUMBERS`; NaN equals NaN), e.g. ["epoch 3 train_loss 1.41 vs 1.42"]."""
    def of(rec, key):
        h = rec["history"]
        if h.empty:
            return h
        h = h[(h.dataset == key[0]) & (h.method == key[1]) & (h.seed == key[2])]
        return h.set_index("epoch")[[c for c in HISTORY_NUMBERS if c in h.columns]].sort_index()

    x, y = of(a, key_a), of(b, key_b)
    if len(x) != len(y) or list(x.index) != list(y.index):
        return [f"epochs {len(x)} vs {len(y)}"] if len(x) or len(y) else []
    out = []
    for col in x.columns.intersection(y.columns):
        u, v = pd.to_numeric(x[col], errors="coerce"), pd.to_numeric(y[col], errors="coerce")
        diff = ~((u == v) | (u.isna() & v.isna()))
        out += [f"epoch {e} {col} {u[e]:.10g} vs {v[e]:.10g}" for e in diff[diff].index[:2]]
    return out
