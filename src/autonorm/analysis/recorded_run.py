"""Is a run already in a study's committed record? The study workers (studies/queue_lib.sh) ask before they
train, so a worker on a new machine, whose results folder is empty, skips the runs that earlier sittings
recorded and reads its pilot's rule from the recorded pilot instead of training it again.

    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/frozen_ln/seed0              # exit 0: recorded, 3: not
    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/frozen_ln/seed0 --metric accuracy   # prints it
    python -m autonorm.analysis.recorded_run STUDY_DIR mnist/autonorm_s/seed1 --froze     # exit 0: it froze, 3: not

"Not" is exit 3, never 1 or 2: a Python without this package, or any uncaught error, exits 1, and a bad
argument 2, and a worker must read neither as "not recorded" (it would train a recorded run again). Exit 2
(and a message) for a damaged record, a malformed run name, a recorded run without the metric asked for:
a worker stops on every exit but 0 and 3.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from autonorm.analysis.records import RecordError, merge
from autonorm.analysis.record_runs import finished_runs, parse_run, run_numbers
from autonorm.analysis.study_folders import read_parts

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


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autonorm.analysis.recorded_run", description=__doc__.split("\n\n")[0])
    p.add_argument("study_dir", help="the study folder (studies/NAME)")
    p.add_argument("run", help="dataset/method/seedK")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--metric", help="print the recorded run's test value of this metric")
    what.add_argument("--froze", action="store_true", help="exit 0 only if the recorded run's freeze fired")
    args = p.parse_args(argv)
    try:
        status, text = answer(args.study_dir, args.run, args.metric, args.froze)
    except (RecordError, OSError, ValueError) as e:
        print(f"recorded_run: {e}", file=sys.stderr)
        return ERROR
    if text:
        print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
