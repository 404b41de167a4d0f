#!/usr/bin/env bash
# A california_ablations worker (one core; start one per core): the pilot, rule 1 of README.md, then the runs
# of the todo list (seed by seed: AutoNorm-S, then each variant) that no other worker holds, until none is
# left (the claims: studies/queue_lib.sh). No unfrozen AutoNorm: no row of this study reads it (rule 2).
#   WORKTREE=<a worktree at 6ac1786> CAL_RAW=<folder with cal_housing.data> bash studies/california_ablations/queue.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TODO=$(realpath -- "${TODO:-$HERE/todo.txt}")   # before the cd below: a list named relative to here
PRESET=$(realpath -- "$HERE/../../workflow/presets/california_ablations.yaml")   # the study's, from main
UNFROZEN_AUTONORM=0
. "$HERE/../queue_lib.sh"
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
Q() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete --configfile "$PRESET" \
        --config "raw_from={\"california_housing\": \"${CAL_RAW:?set CAL_RAW}\"}"; }
E=results/california_ablations/eval/california_housing
R=results/california_ablations/runs/california_housing
CLAIMS=results/california_ablations/.claims
run_study rmse "r<=0.5396 and r<=0.8320" "$TODO"   # rule 1 of README.md
