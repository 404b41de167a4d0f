#!/usr/bin/env bash
# A california_depth worker (one core; start one per core): the pilot, rule 1 of README.md, then the runs of
# the todo list (rule 3's methods seed by seed, then AdaNorm, FiLM and DyT as time allows) that no other
# worker holds, until none is left (the claims and the unfrozen-AutoNorm rule: studies/queue_lib.sh).
#   WORKTREE=<a worktree at 6ac1786> CAL_RAW=<folder with cal_housing.data> bash studies/california_depth/queue.sh
# The rest is studies/queue_lib.sh's; the preset is the worktree's (6ac1786 holds it).
set -u
. "$(dirname "$0")/../queue_lib.sh"
study_worker california_depth california_housing CAL_RAW rmse "r<=0.5396 and r<=0.8320" worktree   # rule 1 of README.md
