#!/usr/bin/env bash
# The california_depth queue (one core): the pilot, rule 1 of README.md, then rule 3's methods seed by seed.
#   WORKTREE=<a worktree at 6ac1786> CAL_RAW=<folder with cal_housing.data> bash studies/california_depth/queue.sh
set -u
cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}"
C() { PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete \
        --configfile workflow/presets/california_depth.yaml \
        --config "raw_from={\"california_housing\": \"${CAL_RAW:?set CAL_RAW}\"}"; }
E=results/california_depth/eval/california_housing
C $E/frozen_ln/seed0.json || exit 1
rmse=$(python -c "import json;print(json.load(open('$E/frozen_ln/seed0.json'))['test']['rmse'])")
echo "$(date -u +%FT%TZ) pilot test rmse $rmse"
python -c "import sys; r=float('$rmse'); sys.exit(0 if r<=0.5396 and r<=0.8320 else 3)" || { echo "out of regime: rule 2 by hand"; exit 3; }
R=results/california_depth/runs/california_housing
for s in 0 1 2 3 4; do for m in frozen_ln autonorm_s autonorm random teacher_mlp; do
  # unfrozen AutoNorm is a run of its own only where AutoNorm-S froze (README, rule 3 as amended)
  if [ $m = autonorm ] && ! python -c "import json,sys; sys.exit(0 if json.load(open('$R/autonorm_s/seed$s/freeze.json')).get('froze') else 1)"; then
    echo "autonorm seed $s: AutoNorm-S did not freeze, its run is unfrozen AutoNorm"; continue; fi
  echo "$(date -u +%FT%TZ) $m seed $s"; C $E/$m/seed$s.json || exit 1
done; done
for s in 0 1 2 3 4; do for m in adanorm film dyt; do   # as time allows
  echo "$(date -u +%FT%TZ) $m seed $s"; C $E/$m/seed$s.json || exit 1
done; done
