# The study workers' shared part (sourced by studies/*/queue.sh; one worker a core, start as many as
# there are cores). The caller sets E (the study's eval folder of the dataset), R (its runs folder),
# CLAIMS (a folder for the lock files) and the function Q (snakemake with the study's preset).
# A run is claimed by an flock on its own lock file, held while it trains: a worker that dies (a machine
# that stops with the session) lets go of its claim, and the next worker started resumes that run from
# its last checkpoint, before any later run of the list. The list itself is never edited.

take() {  # train run $1 (method/seedN) unless it is done or another worker holds it
  [ -s "$E/$1.json" ] && return 0
  exec 8>"$CLAIMS/${1//\//_}.lock"
  if flock -n 8; then   # else another worker holds it: go on down the list
    [ -s "$E/$1.json" ] || { echo "$(date -u +%FT%TZ) $1"; Q "$E/$1.json" || return 1; }
  fi
  exec 8>&-
}

run_list() {  # the runs of list $1 (method/seedN a line) in order; unfrozen AutoNorm is AutoNorm-S's run
  # wherever the freeze does not fire, so a seed gets its own autonorm run only where its AutoNorm-S froze,
  # taken right after that AutoNorm-S run
  local next s
  while read -r next <&3; do
    [ -z "$next" ] && continue
    take "$next" || return 1
    case $next in autonorm_s/seed*)
      s=${next#autonorm_s/}
      if [ -s "$E/$next.json" ] && python -c "import json,sys; sys.exit(0 if json.load(open('$R/autonorm_s/$s/freeze.json')).get('froze') else 1)"; then
        take "autonorm/$s" || return 1
      fi;;
    esac
  done 3<"$1"
  echo "$(date -u +%FT%TZ) nothing left in $1"
}

run_study() {  # the pilot (one worker trains it, the others wait), rule 1 on its test metric $1 (a Python
  # condition $2 on r, its value), then the list $3; exit 3 when the pilot is out of the regime
  mkdir -p "$CLAIMS"
  exec 9>"$CLAIMS/pilot.lock"; flock 9
  [ -s "$E/frozen_ln/seed0.json" ] || Q "$E/frozen_ln/seed0.json" || exit 1
  flock -u 9
  local r
  r=$(python -c "import json;print(json.load(open('$E/frozen_ln/seed0.json'))['test']['$1'])")
  echo "$(date -u +%FT%TZ) pilot test $1 $r"
  python -c "import sys; r=float('$r'); sys.exit(0 if ($2) else 3)" || { echo "out of regime: rule 2 by hand"; exit 3; }
  run_list "$3" || exit 1
}
