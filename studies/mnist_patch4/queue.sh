#!/usr/bin/env bash
# An mnist_patch4 worker (one core; start one per core): waits for the pilot, applies rule 1 of README.md,
# then trains the runs of the todo list (rule 3's order) that no other worker holds, until none is left
# (the claims and the unfrozen-AutoNorm rule: studies/queue_lib.sh).
#   WORKTREE=<a worktree at 6ac1786> MNIST_RAW=<folder with the four IDX files> bash studies/mnist_patch4/queue.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TODO=$(realpath -- "${TODO:-$HERE/todo.txt}")   # before the cd below: a list named relative to here
. "$HERE/../queue_lib.sh"
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
Q() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete \
        --configfile workflow/presets/mnist_patch4.yaml --config "raw_from={\"mnist\": \"${MNIST_RAW:?set MNIST_RAW}\"}"; }
E=results/mnist_patch4/eval/mnist
R=results/mnist_patch4/runs/mnist
CLAIMS=results/mnist_patch4/.claims
run_study accuracy "r>=96.82" "$TODO"   # rule 1 of README.md
