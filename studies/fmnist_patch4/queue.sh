#!/usr/bin/env bash
# An fmnist_patch4 worker (one core; start one per core): waits for the pilot, applies rule 1 of README.md,
# then trains the runs of the todo list (rule 3's order) that no other worker holds, until none is left
# (the claims and the unfrozen-AutoNorm rule: studies/queue_lib.sh).
#   WORKTREE=<a worktree at 6ac1786> FMNIST_RAW=<folder with the four IDX files> bash studies/fmnist_patch4/queue.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TODO=$(realpath -- "${TODO:-$HERE/todo.txt}")   # before the cd below: a list named relative to here
PRESET=$(realpath -- "$HERE/../../workflow/presets/fmnist_patch4.yaml")   # the study's, from main
. "$HERE/../queue_lib.sh"
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
Q() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete --configfile "$PRESET" \
        --config "raw_from={\"fashion_mnist\": \"${FMNIST_RAW:?set FMNIST_RAW}\"}"; }
E=results/fmnist_patch4/eval/fashion_mnist
R=results/fmnist_patch4/runs/fashion_mnist
CLAIMS=results/fmnist_patch4/.claims
run_study accuracy "r>=91.12" "$TODO"   # rule 1 of README.md
