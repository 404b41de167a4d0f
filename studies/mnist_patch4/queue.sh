#!/usr/bin/env bash
# An mnist_patch4 worker (one core; start one per core): waits for the pilot, applies rule 1 of README.md,
# then trains the runs of the todo list (rule 3's order) that no other worker holds, until none is left.
#   WORKTREE=<a worktree at 6ac1786> MNIST_RAW=<folder with the four IDX files> bash studies/mnist_patch4/queue.sh
# A run is claimed by an flock on its own lock file, held while it trains: a worker that dies (a machine
# that stops with the session) lets go of its claim, and the next worker started resumes that run from
# its last checkpoint, before any later run of the list. The list itself is never edited.
# Unfrozen AutoNorm is AutoNorm-S's run wherever the freeze does not fire; a seed whose AutoNorm-S froze
# gets its own autonorm run, taken right after that AutoNorm-S run (rule 3).
set -u
TODO=${TODO:-$(cd "$(dirname "$0")" && pwd)/todo.txt}
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
Q() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete \
        --configfile workflow/presets/mnist_patch4.yaml --config "raw_from={\"mnist\": \"${MNIST_RAW:?set MNIST_RAW}\"}"; }
E=results/mnist_patch4/eval/mnist
R=results/mnist_patch4/runs/mnist
CLAIMS=results/mnist_patch4/.claims
mkdir -p "$CLAIMS"
exec 9>"$CLAIMS/pilot.lock"; flock 9   # one worker trains the pilot, the other waits for it
[ -s $E/frozen_ln/seed0.json ] || Q $E/frozen_ln/seed0.json || exit 1
flock -u 9
acc=$(python -c "import json;print(json.load(open('$E/frozen_ln/seed0.json'))['test']['accuracy'])")
echo "$(date -u +%FT%TZ) pilot test accuracy $acc"
python -c "import sys; a=float('$acc'); sys.exit(0 if a>=96.82 else 3)" || { echo "out of regime: rule 2 by hand"; exit 3; }
take() {  # train run $1 (method/seedN) unless it is done or another worker holds it
  [ -s "$E/$1.json" ] && return 0
  exec 8>"$CLAIMS/${1//\//_}.lock"
  if flock -n 8; then   # else another worker holds it: go on down the list
    [ -s "$E/$1.json" ] || { echo "$(date -u +%FT%TZ) $1"; Q "$E/$1.json" || return 1; }
  fi
  exec 8>&-
}
while read -r next <&3; do
  [ -z "$next" ] && continue
  take "$next" || exit 1
  case $next in autonorm_s/seed*)   # its freeze fired: unfrozen AutoNorm of this seed is a run of its own
    s=${next#autonorm_s/}
    if [ -s "$E/$next.json" ] && python -c "import json,sys; sys.exit(0 if json.load(open('$R/autonorm_s/$s/freeze.json')).get('froze') else 1)"; then
      take "autonorm/$s" || exit 1
    fi;;
  esac
done 3<"$TODO"
echo "$(date -u +%FT%TZ) nothing left in $TODO"
