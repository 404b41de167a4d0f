#!/usr/bin/env bash
# An mnist_patch4 worker (one core; start one per core): waits for the pilot, applies rule 1 of README.md,
# then trains the runs of the todo list (rule 3's order) that no other worker holds, until none is left
# (the claims and the unfrozen-AutoNorm rule: studies/queue_lib.sh).
#   WORKTREE=<a worktree at 6ac1786> MNIST_RAW=<folder with the four IDX files> bash studies/mnist_patch4/queue.sh
# The rest is studies/queue_lib.sh's; the preset is the worktree's (6ac1786 holds it).
set -u
. "$(dirname "$0")/../queue_lib.sh"
study_worker mnist_patch4 mnist MNIST_RAW accuracy "r>=96.82" worktree   # rule 1 of README.md
