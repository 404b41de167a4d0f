"""``autonorm-report --record``: a results folder recorded as one part of a study (analysis.records).

    autonorm-report --record NAME --results FOLDER [--part PART] [--skip-recorded] [--cpu TEXT]
                    [--replace [--drop RUN ...]]

The part is written beside the study as ``.PART.tmp``, checked against the study's other parts,
and only then renamed into place. Recording into a part that exists replaces it: that is refused
when the part holds runs the results folder lacks (they would be dropped) or holds with other
numbers, listing them; ``--replace`` goes ahead and carries the old part's runs the folder lacks
into the new part, except those named with ``--drop dataset/method/seedK``.
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Sequence

from autonorm.analysis.record_runs import differences, finished_runs, parse_run, run_name, select_runs
from autonorm.analysis.records import MANIFEST, RecordError, merge, read_part, record_of, write_part
from autonorm.analysis.study_folders import load_study, read_checked_part, read_parts, record_files
from autonorm.io_utils import read_json


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-report --record",
                                description="Record a results folder as a study record (committed data).")
    p.add_argument("--record", required=True, metavar="NAME", help="the study's name (studies/NAME)")
    p.add_argument("--results", required=True, help="the results folder to record (e.g. results/depth)")
    p.add_argument("--part", default=None,
                   help="this part's name (default: the date and the host, e.g. 2026-12-02-vm)")
    p.add_argument("--studies-dir", default="studies")
    p.add_argument("--skip-recorded", action="store_true",
                   help="leave out the runs the study's other parts already hold (each checked to be the "
                        "same run: config hash, data identity, final numbers), so that a folder that "
                        "goes on from sitting to sitting is recorded part by part")
    p.add_argument("--cpu", default=None, metavar="TEXT",
                   help="the CPU the runs trained on, for runs whose env.json records none (older code): "
                        "fills provenance.csv.gz's cpu column, noted in the manifest (cpu_declared); a run "
                        "that records another CPU is refused")
    p.add_argument("--replace", action="store_true",
                   help="replace the part PART that exists, keeping the runs it holds and the results "
                        "folder lacks (carried over; the manifest lists them)")
    p.add_argument("--drop", action="append", default=[], metavar="RUN",
                   help="with --replace: a run of the old part not to carry over (dataset/method/seedK; "
                        "repeatable)")
    return p


def _old_part(dest: Path, replace: bool) -> dict | None:
    """The part that ``dest`` holds (read and checked), or None; a folder of record files without
    a manifest is refused unless ``replace`` (then nothing of it can be carried over)."""
    if (dest / MANIFEST).is_file():
        return read_checked_part(dest)
    if dest.is_dir() and record_files(dest) and not replace:
        raise RecordError(f"{dest}: record files and no {MANIFEST}: restore it (git checkout -- '{dest / MANIFEST}') "
                          "or pass --replace to record this part anew (its old files are not read)")
    return None


def _replacing(old: dict, rec: dict, dest: Path, replace: bool, drop: Sequence[str]) -> dict:
    """``rec`` (the results folder's record) as the part that replaces ``old``: refused without
    ``replace`` when it would drop old runs or change them; with it, the old runs that ``rec``
    lacks are carried over, except those in ``drop``."""
    old_runs, new_runs = set(finished_runs(old)), set(finished_runs(rec))
    lost = sorted(old_runs - new_runs)
    changed = [k for k in sorted(old_runs & new_runs) if differences(old, rec, k)]
    if not replace:
        if lost or changed:
            what = [f"drop {len(lost)} of its runs ({', '.join(map(run_name, lost))})"] if lost else []
            what += [f"change {len(changed)} ({', '.join(map(run_name, changed))})"] if changed else []
            raise RecordError(f"{dest} is a recorded part of {len(old_runs)} runs; recording this results folder "
                              f"into it would {' and '.join(what)}: pass --replace to replace it (the runs it "
                              "drops are carried over; --drop RUN leaves one out), or record another --part")
        return rec
    names = {run_name(k): k for k in old_runs}
    unknown = [d for d in drop if d not in names]
    kept = [d for d in drop if d in names and names[d] in new_runs]
    if unknown or kept:
        raise RecordError(f"--drop {' '.join(unknown + kept)}: " + (
            f"not a run of {dest} (it holds {', '.join(sorted(names))})" if unknown else
            "the results folder holds it: --drop leaves out only runs of the old part that the folder lacks"))
    carry = [k for k in lost if run_name(k) not in drop]
    if not carry:
        return rec
    merged = merge([{**rec, "part": "the results folder", "manifest": {"grid": rec["grid"]}},
                    select_runs(old, carry, keep=True)])
    for name in ("datasets", "baselines"):  # one row per dataset (and metric), as one folder's record has
        merged[name] = merged[name].drop_duplicates().reset_index(drop=True)
    carried = [run_name(k) for k in carry]
    declared = dict(rec.get("cpu_declared") or {})
    for cpu, runs in (old["manifest"].get("cpu_declared") or {}).items():  # the carried runs' own notes
        declared[cpu] = sorted(set(declared.get(cpu, [])) | (set(runs) & set(carried)))
    return {**merged, "cpu_declared": declared, "carried": carried}


def main(argv: Sequence[str] | None = None) -> int:
    """Record a results folder as (one part of) study NAME under studies/NAME/PART."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.drop and not args.replace:
        raise RecordError(f"--drop {' '.join(args.drop)} goes with --replace (it names runs of the part replaced)")
    bad = [d for d in args.drop if parse_run(d) is None]
    if bad:
        raise RecordError(f"--drop {' '.join(bad)}: a run is named dataset/method/seedK, e.g. mnist/autonorm_s/seed2")
    part = args.part or f"{time.strftime('%Y-%m-%d', time.gmtime())}-{socket.gethostname()}"
    study_dir = Path(args.studies_dir) / args.record
    dest = study_dir / part
    results = Path(args.results).resolve()
    # the results folder as the user would type it here; outside this folder only its last parts
    # (a committed manifest names no path of one machine)
    shown = (os.path.relpath(results) if results.is_relative_to(Path.cwd().resolve())
             else "<...>/" + "/".join(results.parts[-2:]))
    command = "autonorm-report --record " + " ".join((args.record, "--results", shown, "--part", part))
    command += " --skip-recorded" * args.skip_recorded
    command += f" --cpu {shlex.quote(args.cpu)}" if args.cpu is not None else ""
    command += " --replace" * args.replace + "".join(f" --drop {d}" for d in args.drop)
    others = read_parts(study_dir, skip=[part])  # the study's other parts, checked
    old = _old_part(dest, args.replace)
    if args.drop and old is None:
        raise RecordError(f"--drop {' '.join(args.drop)}: {dest} holds no recorded part to replace")
    held = merge(others) if args.skip_recorded and others else None
    rec, _ = record_of(args.results, held, args.cpu)
    if old is not None:
        rec = _replacing(old, rec, dest, args.replace, args.drop)
    tmp = dest.parent / f".{part}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    write_part(rec, tmp, args.record, command, part=part)
    try:  # refuses a part that cannot be merged with the study's other parts, before it lands
        merge(others + [read_part(tmp)])
    except RecordError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    study = load_study(study_dir)
    manifest = read_json(dest / MANIFEST)
    size = sum((dest / f).stat().st_size for f in manifest["files"]) + (dest / MANIFEST).stat().st_size
    note = f"; replaced the part it held ({len(finished_runs(old))} runs)" if old is not None else ""
    note += f", carrying over {', '.join(manifest['carried'])}" if manifest.get("carried") else ""
    note += f", dropping {', '.join(args.drop)}" if args.drop else ""
    note += "".join(f"; cpu {c!r} declared for {len(r)} runs whose env.json records none (manifest: cpu_declared)"
                    for c, r in manifest.get("cpu_declared", {}).items())
    print(f"autonorm-report --record: {manifest['n_ok']} finished and {manifest['n_diverged']} diverged runs "
          f"of {args.results} -> {dest} ({size / 1024:.0f} KiB){note}; the study has "
          f"{len(finished_runs(study))} finished or diverged runs in {len(study['manifests'])} part(s) (its grid's "
          f"unfinished runs aside)")
    return 0
