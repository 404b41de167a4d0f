#!/usr/bin/env bash
# An fmnist_patch4 worker (one core; start one per core): waits for the pilot, applies rule 1 of README.md,
# then trains the runs of the todo list (rule 3's order) that no other worker holds, until none is left
# (the claims and the unfrozen-AutoNorm rule: studies/queue_lib.sh).
#   WORKTREE=<a worktree at 6ac1786> FMNIST_RAW=<folder with the four IDX files> bash studies/fmnist_patch4/queue.sh
# The rest is studies/queue_lib.sh's; the preset is this checkout's (written after 6ac1786).
set -u
. "$(dirname "$0")/../queue_lib.sh"
study_worker fmnist_patch4 fashion_mnist FMNIST_RAW accuracy "r>=91.12" main   # rule 1 of README.md
