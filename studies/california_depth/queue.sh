#!/usr/bin/env bash
# A california_depth worker (one core; start one per core): the pilot, rule 1 of README.md, then the runs of
# the todo list (rule 3's methods seed by seed, then AdaNorm, FiLM and DyT as time allows) that no other
# worker holds, until none is left (the claims and the unfrozen-AutoNorm rule: studies/queue_lib.sh).
#   WORKTREE=<a worktree at 6ac1786> CAL_RAW=<folder with cal_housing.data> bash studies/california_depth/queue.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TODO=$(realpath -- "${TODO:-$HERE/todo.txt}")   # before the cd below: a list named relative to here
. "$HERE/../queue_lib.sh"
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
Q() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete \
        --configfile workflow/presets/california_depth.yaml \
        --config "raw_from={\"california_housing\": \"${CAL_RAW:?set CAL_RAW}\"}"; }
E=results/california_depth/eval/california_housing
R=results/california_depth/runs/california_housing
CLAIMS=results/california_depth/.claims
run_study rmse "r<=0.5396 and r<=0.8320" "$TODO"   # rule 1 of README.md
