#!/usr/bin/env bash
# A california_depth worker (one core; start one per core): the pilot, rule 1 of README.md, then the runs of
# the todo list (rule 3's methods seed by seed, then AdaNorm, FiLM and DyT as time allows) that no other
# worker holds, until none is left (the claims and the unfrozen-AutoNorm rule: studies/queue_lib.sh).
#   WORKTREE=<a worktree at 6ac1786> CAL_RAW=<folder with cal_housing.data> bash studies/california_depth/queue.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TODO=${TODO:-$HERE/todo.txt}
. "$HERE/../queue_lib.sh"
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
Q() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete \
        --configfile workflow/presets/california_depth.yaml \
        --config "raw_from={\"california_housing\": \"${CAL_RAW:?set CAL_RAW}\"}"; }
E=results/california_depth/eval/california_housing
R=results/california_depth/runs/california_housing
CLAIMS=results/california_depth/.claims
mkdir -p "$CLAIMS"
exec 9>"$CLAIMS/pilot.lock"; flock 9   # one worker trains the pilot, the other waits for it
[ -s $E/frozen_ln/seed0.json ] || Q $E/frozen_ln/seed0.json || exit 1
flock -u 9
rmse=$(python -c "import json;print(json.load(open('$E/frozen_ln/seed0.json'))['test']['rmse'])")
echo "$(date -u +%FT%TZ) pilot test rmse $rmse"
python -c "import sys; r=float('$rmse'); sys.exit(0 if r<=0.5396 and r<=0.8320 else 3)" || { echo "out of regime: rule 2 by hand"; exit 3; }
run_list "$TODO" || exit 1
