#!/usr/bin/env bash
# An mnist_patch4_ablations worker (one core; start one per core): the pilot, rule 1 of README.md, then the
# runs of the todo list (the Teacher MLPs, then seed by seed AutoNorm-S and distillation, then the taus) that no
# other worker holds, until none is left (the claims: studies/queue_lib.sh). No unfrozen AutoNorm: no row
# of this study reads it (rule 2).
#   WORKTREE=<a worktree at 6ac1786> MNIST_RAW=<folder with the four IDX files> bash studies/mnist_patch4_ablations/queue.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TODO=$(realpath -- "${TODO:-$HERE/todo.txt}")   # before the cd below: a list named relative to here
PRESET=$(realpath -- "$HERE/../../workflow/presets/mnist_patch4_ablations.yaml")   # the study's, from main
UNFROZEN_AUTONORM=0
. "$HERE/../queue_lib.sh"
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
Q() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete --configfile "$PRESET" \
        --config "raw_from={\"mnist\": \"${MNIST_RAW:?set MNIST_RAW}\"}"; }
E=results/mnist_patch4_ablations/eval/mnist
R=results/mnist_patch4_ablations/runs/mnist
CLAIMS=results/mnist_patch4_ablations/.claims
run_study accuracy "r>=96.82" "$TODO"   # rule 1 of README.md
