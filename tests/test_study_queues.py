"""The mnist_patch4 study's worker queue (studies/mnist_patch4/queue.sh), run against a stub `snakemake`
that writes each target it is asked for: the pilot's rule, the list's order, a run another worker holds,
and unfrozen AutoNorm trained only for the seeds whose AutoNorm-S froze."""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

QUEUE = Path(__file__).resolve().parents[1] / "studies" / "mnist_patch4" / "queue.sh"

# the stub: appends its target to trained.log and writes it; an AutoNorm-S run writes its freeze record,
# froze when its seed is listed in $FREEZES
STUB = r"""#!/usr/bin/env bash
target=$1
echo "${target#results/mnist_patch4/eval/mnist/}" >> "$STUB_LOG"
mkdir -p "$(dirname "$target")"
echo "{\"test\": {\"accuracy\": $PILOT_ACC}}" > "$target"
case $target in */autonorm_s/seed*)
  s=$(basename "$target" .json); d=results/mnist_patch4/runs/mnist/autonorm_s/$s; mkdir -p "$d"
  case " $FREEZES " in *" $s "*) f=true;; *) f=false;; esac
  echo "{\"froze\": $f}" > "$d/freeze.json";;
esac
"""


def _queue(tmp_path: Path, todo: list[str], freezes: str = "", pilot_acc: float = 98.37):
    if shutil.which("flock") is None:
        pytest.skip("flock (util-linux) is not installed")
    work, bin_ = tmp_path / "worktree", tmp_path / "bin"
    work.mkdir(exist_ok=True)
    bin_.mkdir(exist_ok=True)
    (bin_ / "snakemake").write_text(STUB)
    (bin_ / "snakemake").chmod(0o755)
    (tmp_path / "todo.txt").write_text("\n".join(todo) + "\n")
    log = tmp_path / "trained.log"
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}", "WORKTREE": str(work),
           "MNIST_RAW": str(tmp_path / "raw with space"), "TODO": str(tmp_path / "todo.txt"),
           "STUB_LOG": str(log), "FREEZES": freezes, "PILOT_ACC": str(pilot_acc)}
    proc = subprocess.run(["bash", str(QUEUE)], env=env, capture_output=True, text=True, timeout=120)
    trained = log.read_text().split() if log.exists() else []
    return proc, trained


def test_the_queue_trains_the_list_in_order_and_unfrozen_autonorm_only_where_the_freeze_fired(tmp_path):
    todo = ["autonorm_s/seed0", "frozen_ln/seed1", "autonorm_s/seed1", "random/seed0"]
    proc, trained = _queue(tmp_path, todo, freezes="seed1")
    assert proc.returncode == 0, proc.stderr
    assert trained == ["frozen_ln/seed0.json", "autonorm_s/seed0.json", "frozen_ln/seed1.json",
                       "autonorm_s/seed1.json", "autonorm/seed1.json", "random/seed0.json"]
    # a second worker started later finds nothing left: no run twice
    (tmp_path / "trained.log").unlink()
    proc, trained = _queue(tmp_path, todo, freezes="seed1")
    assert proc.returncode == 0 and trained == []


def test_a_run_another_worker_holds_is_left_to_it(tmp_path):
    todo = ["autonorm_s/seed0", "frozen_ln/seed1"]
    claims = tmp_path / "worktree" / "results" / "mnist_patch4" / ".claims"
    claims.mkdir(parents=True)
    with open(claims / "autonorm_s_seed0.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "another worker is training it"
        proc, trained = _queue(tmp_path, todo, freezes="seed0")
    assert proc.returncode == 0, proc.stderr
    # neither the held run nor its unfrozen twin (its freeze is not decided yet) is taken here
    assert trained == ["frozen_ln/seed0.json", "frozen_ln/seed1.json"]


def test_a_pilot_out_of_the_regime_stops_the_queue(tmp_path):
    proc, trained = _queue(tmp_path, ["autonorm_s/seed0"], pilot_acc=96.5)
    assert proc.returncode == 3 and "out of regime" in proc.stdout
    assert trained == ["frozen_ln/seed0.json"]
