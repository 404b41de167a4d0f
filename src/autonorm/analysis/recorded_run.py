"""Is a run already in a study's committed record? The study workers (studies/queue_lib.sh) ask before they
train, so a worker on a new machine, whose results folder is empty, skips the runs that earlier sittings
recorded and reads its pilot's rule from the recorded pilot instead of training it again.

    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/frozen_ln/seed0              # exit 0: recorded, 3: not
    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/frozen_ln/seed0 --metric accuracy   # prints it
    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/autonorm_s/seed1 --froze     # exit 0: it froze, 3: not
    python -m autonorm.analysis.recorded_run STUDY_DIR --this-cpu   # exit 0: this CPU type may train here, 3: not

A worker asks the last before it trains anything: a study pairs runs of one CPU type, or of types a
same-floats check joins (study.json), so a machine of another type would train runs the page refuses to
pair (``AUTONORM_CPU`` names the CPU instead of this machine's, for tests).

"Not" is exit 3, never 1 or 2: a Python without this package, or any uncaught error, exits 1, and a bad
argument 2, and a worker must read neither as "not recorded" (it would train a recorded run again). Exit 2
(and a message) for a damaged record, a malformed run name, a recorded run without the metric asked for:
a worker stops on every exit but 0 and 3.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from autonorm.analysis.records import RecordError, merge
from autonorm.analysis.record_runs import finished_runs, parse_run, run_numbers
from autonorm.analysis.study_folders import DECLARATION, load_studies, read_parts

NOT_RECORDED, ERROR = 3, 2


def recorded_study(study_dir: str | Path) -> dict | None:
    """The study's parts merged; None where it has none yet (a study before its first record)."""
    parts = read_parts(study_dir)
    return merge(parts) if parts else None


def answer(study_dir: str | Path, run: str, metric: str | None = None, froze: bool = False) -> tuple[int, str]:
    """(exit status, text to print) for one question about run ``run`` (dataset/method/seedK)."""
    key = parse_run(run)
    if key is None:
        raise RecordError(f"{run!r}: a run is named dataset/method/seedK, e.g. mnist/autonorm_s/seed2")
    study = recorded_study(study_dir)
    if study is None or key not in finished_runs(study):
        return NOT_RECORDED, ""
    if metric is not None:
        numbers = run_numbers(study["values"], key)
        name = f"{key[0]}:{metric}"
        if name not in numbers.index:
            raise RecordError(f"{study_dir}: recorded run {run} has no test {metric!r} (it has "
                              f"{', '.join(sorted(numbers.index)) or 'none'})")
        return 0, repr(float(numbers[name]))
    if froze:
        fr = study["freeze"]
        rows = fr[(fr.dataset == key[0]) & (fr.method == key[1]) & (fr.seed == key[2])]
        if len(rows) != 1:
            raise RecordError(f"{study_dir}: recorded run {run} has {len(rows)} freeze rows, expected 1")
        return (0 if bool(rows.froze.iloc[0]) else NOT_RECORDED), ""
    return 0, ""


def this_cpu() -> str:
    """This machine's CPU type as every run's env.json names it (provenance.cpu_description), or $AUTONORM_CPU."""
    from autonorm.provenance import cpu_description
    return os.environ.get("AUTONORM_CPU") or cpu_description() or ""


def cpu_check(study_dir: str | Path, cpu: str | None = None, threads: int = 1) -> tuple[int, str]:
    """(0, "") where CPU type ``cpu`` (default: this machine's) may train the study's runs at ``threads`` threads
    (a worker's one): the study's runs were trained at that count, and it has no run naming a CPU yet, or ``cpu``
    is one its runs name or one its same-floats checks join (study.json); else (3, why)."""
    if not read_parts(study_dir):
        return 0, ""   # no run yet: this CPU becomes the study's
    # the study as the page reads it: its study.json's same-floats checks checked against the record
    (study,) = load_studies([(Path(study_dir).name, study_dir)])
    prov = study.record["provenance"]
    if "torch_threads" in prov:
        counts = sorted({int(t) for t in prov["torch_threads"].dropna()} - {threads})
        if counts:
            return NOT_RECORDED, (f"{Path(study_dir).name}: its runs trained at {', '.join(map(str, counts))} "
                                  f"threads, a worker's at {threads}: a CPU rounds floats differently at another "
                                  "thread count, so they would pair with none of the study's; train them by hand "
                                  "at the study's count")
    if prov.empty or "cpu" not in prov:
        return 0, ""
    types = {str(c).strip() for c in prov["cpu"].dropna() if str(c).strip()}
    if not types:
        return 0, ""
    joined = types | {c["cpu"] for c in study.same_floats}
    cpu = this_cpu() if cpu is None else cpu   # torch is imported only where a run names its CPU
    if cpu in joined:
        return 0, ""
    return NOT_RECORDED, (f"{Path(study_dir).name}: this machine's CPU type {cpu or '(unknown)'!r} is not the study's "
                          f"({', '.join(map(repr, sorted(joined)))}): its runs would pair with none of the study's "
                          "(floats round differently). Train one recorded run again here for two epochs and check "
                          "it (python -m autonorm.analysis.same_floats STUDY RUN RUN_FOLDER; declare the check in "
                          f"{DECLARATION}), or train another study here")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autonorm.analysis.recorded_run", description=__doc__.split("\n\n")[0])
    p.add_argument("study_dir", help="the study folder (studies/NAME)")
    p.add_argument("run", nargs="?", help="dataset/method/seedK")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--this-cpu", action="store_true",
                      help="exit 0 only if this machine's CPU type may train the study's runs (no run yet, the "
                           "study's type, or one a same-floats check joins)")
    what.add_argument("--metric", help="print the recorded run's test value of this metric")
    what.add_argument("--froze", action="store_true", help="exit 0 only if the recorded run's freeze fired")
    args = p.parse_args(argv)
    if (args.run is None) != args.this_cpu:
        p.error("name a run, or ask --this-cpu (without a run)")
    try:
        if args.this_cpu:
            status, why = cpu_check(args.study_dir)
            if why:
                print(why, file=sys.stderr)
            return status
        status, text = answer(args.study_dir, args.run, args.metric, args.froze)
    except (RecordError, OSError, ValueError) as e:
        print(f"recorded_run: {e}", file=sys.stderr)
        return ERROR
    if text:
        print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
