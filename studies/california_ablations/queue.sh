#!/usr/bin/env bash
# A california_ablations worker (one core; start one per core): the pilot, rule 1 of README.md, then the runs
# of the todo list (seed by seed: AutoNorm-S, then each variant), then those of todo_tables.txt (the tables'
# other methods, seed by seed) that no other worker holds, until none is left (the claims: studies/queue_lib.sh).
# No unfrozen AutoNorm: no row of this study reads it (rule 2).
#   WORKTREE=<a worktree at 6ac1786> CAL_RAW=<folder with cal_housing.data> bash studies/california_ablations/queue.sh
# The rest is studies/queue_lib.sh's; the preset is this checkout's (written after 6ac1786).
set -u
. "$(dirname "$0")/../queue_lib.sh"
UNFROZEN_AUTONORM=0   # rule 2 of README.md: no row of this study reads unfrozen AutoNorm
study_worker california_ablations california_housing CAL_RAW rmse "r<=0.5396 and r<=0.8320" main \
  todo.txt todo_tables.txt   # rule 1 of README.md; the two lists in order
