"""Is a run already in a study's committed record? The study workers (studies/queue_lib.sh) ask before they
train, so a worker on a new machine, whose results folder is empty, skips the runs that earlier sittings
recorded and reads its pilot's rule from the recorded pilot instead of training it again.

    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/frozen_ln/seed0              # exit 0: recorded, 3: not
    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/frozen_ln/seed0 --metric accuracy   # prints it
    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/autonorm_s/seed1 --froze     # exit 0: it froze, 3: not
    python -m autonorm.analysis.recorded_run STUDY_DIR --this-cpu [--runs RESULTS/STUDY/runs]   # exit 0: this CPU
                                                                      # type may train here, 3: not

A worker asks the last before it trains anything: a study pairs runs of one CPU type, or of types a
same-floats check joins (study.json), so a machine of another type would train runs the page refuses to
pair (``AUTONORM_CPU`` names the CPU instead of this machine's, for tests). With ``--runs`` the runs in this
machine's results folder count too: a run an earlier sitting left partly trained there would be resumed, its
first epochs trained on the CPU its env.json names.

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
from autonorm.io_utils import read_json

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


def local_runs(runs_dir: str | Path | None) -> list[tuple[Path, str, int | None]]:
    """(run folder, CPU type, thread count) of every run under ``runs_dir`` (a study's results/<study>/runs) whose
    env.json exists: finished or partly trained, recorded or not (a trainer writes env.json as an attempt starts)."""
    if runs_dir is None or not Path(runs_dir).is_dir():
        return []
    out = []
    for env_file in sorted(Path(runs_dir).resolve().rglob("env.json")):   # named in full in a message
        try:
            env = read_json(env_file)
        except (OSError, ValueError) as e:
            raise RecordError(f"{env_file}: unreadable ({e}); move its run folder aside or train it again") from e
        threads = env.get("torch_threads")
        out.append((env_file.parent, str(env.get("cpu") or "").strip(), int(threads) if threads else None))
    return out


def cpu_check(study_dir: str | Path, cpu: str | None = None, threads: int = 1,
              runs_dir: str | Path | None = None) -> tuple[int, str]:
    """(0, "") where CPU type ``cpu`` (default: this machine's) may train the study's runs at ``threads`` threads
    (a worker's one): the study's runs were trained at that count, and it has no run naming a CPU yet, or ``cpu``
    is one its recorded runs name or one its same-floats checks join (study.json), and so is every run in the
    results folder (with no record yet: of ``cpu``'s type); else (3, why). The study's runs are
    its record's and, given ``runs_dir``, those in this machine's results folder: unrecorded ones, and a run
    partly trained by an earlier sitting, which a worker would resume here (its checkpoint's epochs trained on
    the CPU its env.json names, and a resumed run's env.json names only the last attempt's)."""
    name = Path(study_dir).name
    local = local_runs(runs_dir)
    types: set[str] = set()
    counts: set[int] = set()
    same_floats: list[dict] = []
    if read_parts(study_dir):
        # the study as the page reads it: its study.json's same-floats checks checked against the record
        (study,) = load_studies([(name, study_dir)])
        prov, same_floats = study.record["provenance"], study.same_floats
        if "torch_threads" in prov:
            counts |= {int(t) for t in prov["torch_threads"].dropna()}
        if "cpu" in prov:
            types |= {str(c).strip() for c in prov["cpu"].dropna() if str(c).strip()}
    counts |= {t for _, _, t in local if t is not None}
    where = (f" (the runs in {Path(runs_dir).resolve()} are counted too: move a run folder of another machine "
             "aside, out of the results folder, before a worker trains here)") if local else ""
    if counts - {threads}:
        return NOT_RECORDED, (f"{name}: its runs trained at {', '.join(map(str, sorted(counts - {threads})))} "
                              f"threads, a worker's at {threads}: a CPU rounds floats differently at another "
                              "thread count, so they would pair with none of the study's; train them by hand "
                              f"at the study's count{where}")
    local_types = {c for _, c, _ in local if c}
    if not types and not local_types:
        return 0, ""   # no run naming a CPU yet: this CPU becomes the study's
    cpu = this_cpu() if cpu is None else cpu   # torch is imported only where a run names its CPU
    # the types whose runs pair: the record's and those its same-floats checks join; with no record yet, this
    # machine's where a run here is of its type (the others are then named below), else those of the runs here
    if types:
        joined = types | {c["cpu"] for c in same_floats}
    else:
        joined = {cpu} if cpu in local_types else local_types
    others = [str(d) for d, c, _ in local if c and c not in joined]
    if cpu not in joined:
        study_types = ", ".join(map(repr, sorted(joined)))
        return NOT_RECORDED, (f"{name}: this machine's CPU type {cpu or '(unknown)'!r} is not the study's "
                              f"({study_types}): its runs would pair with none of the study's (floats round "
                              "differently). Train one recorded run again here for two epochs and check it "
                              "(python -m autonorm.analysis.same_floats STUDY RUN RUN_FOLDER; declare the check in "
                              f"{DECLARATION}), or train another study here{where}")
    if others:
        return NOT_RECORDED, (f"{name}: runs in this results folder trained on another CPU type than the study's "
                              f"({', '.join(map(repr, sorted(joined)))}): {', '.join(others)}. Resumed or recorded, "
                              "they would pair with none of the study's (floats round differently): move them "
                              "aside, out of the results folder, before a worker trains here")
    return 0, ""


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
    p.add_argument("--runs", help="with --this-cpu: this machine's runs folder of the study (results/STUDY/runs), "
                                  "whose runs, finished or partly trained, count as the study's")
    args = p.parse_args(argv)
    if (args.run is None) != args.this_cpu:
        p.error("name a run, or ask --this-cpu (without a run)")
    if args.runs and not args.this_cpu:
        p.error("--runs goes with --this-cpu")
    try:
        if args.this_cpu:
            status, why = cpu_check(args.study_dir, runs_dir=args.runs)
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
