"""Does a second CPU type train a study's runs to the same floats? Compare a run trained again there (a
run folder, stopped after a few epochs is enough) with the study's record of that run, and print the
study.json entry that lets the page pair runs across the two CPU types (study_folders, "same_floats").

    python -m autonorm.analysis.same_floats studies/mnist_patch4 mnist/frozen_ln/seed0 RUN_FOLDER

Exit 0 and the entry when every epoch the folder holds equals the record to every digit of its losses;
exit 1 and the epochs that differ when not (then the two CPU types are two machines for the page: pair
nothing across them); exit 2 on bad input (no such run, a folder of another config).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from autonorm.analysis.record_runs import finished_runs, parse_run, provenance_of
from autonorm.analysis.records import RecordError
from autonorm.analysis.study_folders import SAME_FLOATS_NUMBERS, load_study, same_floats_mismatches
from autonorm.io_utils import read_json


def check(study_dir: str | Path, run: str, run_folder: str | Path) -> tuple[dict, list[str]]:
    """(the study.json entry, where the folder's epochs differ from the record: empty when they match)."""
    key = parse_run(run)
    if key is None:
        raise RecordError(f"{run!r}: a run is named dataset/method/seedK, e.g. mnist/autonorm_s/seed2")
    record = load_study(study_dir)
    if key not in finished_runs(record):
        raise RecordError(f"{study_dir}: its record holds no finished run {run}")
    folder = Path(run_folder)
    env, history = read_json(folder / "env.json"), read_json(folder / "history.json")
    want = provenance_of(record["provenance"], key, "config_hash")
    got = {e.get("config_hash") for e in history}
    if not history or got != {want}:
        raise RecordError(f"{folder}/history.json: config hash(es) {sorted(map(str, got))}, the record's run "
                          f"{run} has {want}: not the same run trained again")
    epochs = [{"epoch": int(e["epoch"]), **{n: float(e[n]) for n in SAME_FLOATS_NUMBERS}} for e in history]
    entry = {"run": run, "cpu": env.get("cpu") or "", "epochs": epochs}
    return entry, same_floats_mismatches(record, key, epochs)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autonorm.analysis.same_floats", description=__doc__.split("\n\n")[0])
    p.add_argument("study_dir")
    p.add_argument("run", help="dataset/method/seedK")
    p.add_argument("run_folder", help="the run trained again on the other CPU (its history.json and env.json)")
    args = p.parse_args(argv)
    try:
        entry, bad = check(args.study_dir, args.run, args.run_folder)
    except (RecordError, OSError, ValueError, KeyError) as e:
        print(f"same_floats: {e}", file=sys.stderr)
        return 2
    if bad:
        print(f"same_floats: {args.run} on {entry['cpu']!r} differs from the record: {'; '.join(bad)}", file=sys.stderr)
        return 1
    print(json.dumps(entry, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
