#!/usr/bin/env bash
# An mnist_patch4_ablations worker (one core; start one per core): the pilot, rule 1 of README.md, then the
# runs of the todo list (the Teacher MLPs, then seed by seed AutoNorm-S and distillation, then the taus) that no
# other worker holds, until none is left (the claims: studies/queue_lib.sh). No unfrozen AutoNorm: no row
# of this study reads it (rule 2).
#   WORKTREE=<a worktree at 6ac1786> MNIST_RAW=<folder with the four IDX files> bash studies/mnist_patch4_ablations/queue.sh
# The rest is studies/queue_lib.sh's; the preset is this checkout's (written after 6ac1786).
set -u
. "$(dirname "$0")/../queue_lib.sh"
UNFROZEN_AUTONORM=0   # rule 2 of README.md: no row of this study reads unfrozen AutoNorm
study_worker mnist_patch4_ablations mnist MNIST_RAW accuracy "r>=96.82" main   # rule 1 of README.md
