# The study workers' shared part (sourced by studies/*/queue.sh; one worker a core, start as many as
# there are cores). A study's queue.sh sources it and calls study_worker (at the end) with its study's name,
# dataset, raw-files variable, pilot metric and rule 1; study_worker sets what the functions below read:
# E (the study's eval folder of the dataset), R (its runs folder), CLAIMS (a folder for the lock files),
# HERE (the study folder, whose committed record is asked), and Q runs snakemake with the study's preset.
# A run is claimed by an flock on its own lock file, held while it trains: a worker that dies (a machine
# that stops with the session) lets go of its claim, and the next worker started resumes that run from
# its last checkpoint, before any later run of the list. The list itself is never edited.
# A run the study's committed record holds (an earlier sitting's, on another machine whose results folder is
# gone) is done too: the worker skips it, and reads its pilot's rule and a recorded AutoNorm-S run's freeze
# from the record (autonorm.analysis.recorded_run; a damaged record stops the worker).
# A machine of another CPU type than the study's runs (recorded, or in this machine's results folder, a
# partly trained one included; and than the types its same-floats checks join) trains nothing: the worker
# exits 4 first, since such runs pair with none of the study's.

recorded() {  # is run $1 (method/seedN) in the study's record? 0 yes, 3 no, else stop; $2.. as recorded_run's
  local run=$1; shift
  compgen -G "$HERE/*/" > /dev/null || return 3   # no part folder: nothing recorded yet
  python -m autonorm.analysis.recorded_run "$HERE" "${E##*/}/$run" "$@"
}

done_here_or_recorded() {  # 0: run $1 has its eval file or is recorded, 3: neither, else stop
  [ -s "$E/$1.json" ] && return 0
  recorded "$1"
}

take() {  # train run $1 (method/seedN) unless it is done or another worker holds it
  done_here_or_recorded "$1"; case $? in 0) return 0;; 3) ;; *) return 1;; esac
  exec 8>"$CLAIMS/${1//\//_}.lock"
  if flock -n 8; then   # else another worker holds it: go on down the list
    [ -s "$E/$1.json" ] || { echo "$(date -u +%FT%TZ) $1"; Q "$E/$1.json" || return 1; }
  fi
  exec 8>&-
}

froze() {  # 0: AutoNorm-S run $1 (autonorm_s/seedN) froze, 3: it did not or is not done, else stop
  if [ -s "$E/$1.json" ]; then
    python -c "import json,sys; sys.exit(0 if json.load(open('$R/$1/freeze.json')).get('froze') else 3)"
  else
    recorded "$1" --froze
  fi
}

run_list() {  # the runs of list $1 (method/seedN a line) in order; unfrozen AutoNorm is AutoNorm-S's run
  # wherever the freeze does not fire, so a seed gets its own autonorm run only where its AutoNorm-S froze,
  # taken right after that AutoNorm-S run (unless the study sets UNFROZEN_AUTONORM=0: it reads none)
  local next
  while read -r next <&3; do
    [ -z "$next" ] && continue
    take "$next" || return 1
    case ${UNFROZEN_AUTONORM:-1}:$next in 1:autonorm_s/seed*)   # a study may say it reads no unfrozen run
      froze "$next"; case $? in 0) take "autonorm/${next#autonorm_s/}" || return 1;; 3) ;; *) return 1;; esac;;
    esac
  done 3<"$1"
  echo "$(date -u +%FT%TZ) nothing left in $1"
}

run_study() {  # the pilot (one worker trains it, the others wait unless PILOT_WAIT=0), rule 1 on its test metric $1 (a Python
  # condition $2 on r, its value), then the lists $3.. one after another; exit 3 when the pilot is out of the regime
  mkdir -p "$CLAIMS"
  local r pilot=$E/frozen_ln/seed0.json
  exec 9>"$CLAIMS/pilot.lock"
  if [ "${PILOT_WAIT:-1}" = 0 ] && ! flock -n 9; then   # a study's amendment: train the lists beside the
    # pilot, whose rule 1 is read before any run is recorded (the runs are set aside if it fails)
    echo "$(date -u +%FT%TZ) another worker holds the pilot: the lists meanwhile (PILOT_WAIT=0)"
    exec 9>&-
    local list
    for list in "${@:3}"; do run_list "$list" || exit 1; done
    return 0
  fi
  flock 9
  if [ ! -s "$pilot" ]; then
    r=$(recorded frozen_ln/seed0 --metric "$1")
    case $? in
      0) echo "$(date -u +%FT%TZ) the pilot is in the study's record";;
      3) Q "$pilot" || exit 1; r=;;
      *) exit 1;;
    esac
  fi
  [ -n "${r:-}" ] || r=$(python -c "import json;print(json.load(open('$pilot'))['test']['$1'])")
  flock -u 9
  echo "$(date -u +%FT%TZ) pilot test $1 $r"
  python -c "import sys; r=float('$r'); sys.exit(0 if ($2) else 3)" || { echo "out of regime: rule 2 by hand"; exit 3; }
  local list
  for list in "${@:3}"; do run_list "$list" || exit 1; done
}

Q() {  # snakemake, one core, the study's preset and raw files, in the worktree (study_worker sets the three)
  PYTHONPATH=$PWD/src snakemake "$@" --cores 1 --nolock --rerun-incomplete --configfile "$PRESET" \
    --config "raw_from={\"$DATASET\": \"$RAW\"}"
}

study_worker() {  # the worker of the study whose queue.sh runs (its folder: HERE): $1 the study, $2 its
  # dataset, $3 the variable naming the folder of its raw files, $4 the pilot's test metric, $5 rule 1 (a Python
  # condition on r, that metric), $6 where its preset is read: "main" (this checkout's, a study written after
  # the training code's commit) or "worktree" (the worktree's own, a study that commit already holds).
  # $7.. the study's lists, trained one after another (default: todo.txt), or the one list $TODO names.
  # Trains in $WORKTREE, a git worktree at the training code's commit; exits 4, training nothing, on a machine
  # whose CPU type is not the study's (recorded_run --this-cpu --runs).
  # UNFROZEN_AUTONORM=0 (set by a study whose rows read no unfrozen AutoNorm): no autonorm run (run_list).
  local study=$1 metric=$4 rule1=$5 from=$6
  DATASET=$2
  HERE=$(cd "$(dirname "$0")" && pwd)
  local lists=() list
  if [ -n "${TODO:-}" ]; then lists=("$TODO"); else for list in "${@:7}"; do lists+=("$HERE/$list"); done; fi
  [ ${#lists[@]} -gt 0 ] || lists=("$HERE/todo.txt")
  for list in "${!lists[@]}"; do   # before the cd below: a list named relative to here
    lists[list]=$(realpath -e -- "${lists[list]}") || { echo "no list ${lists[list]}" >&2; exit 2; }
  done
  [ -n "${!3:-}" ] || { echo "set $3 to the folder that holds the raw files of $DATASET" >&2; exit 2; }
  RAW=${!3}
  case $from in
    main) PRESET=$(cd "$HERE/../.." && pwd)/workflow/presets/$study.yaml;;
    worktree) PRESET=workflow/presets/$study.yaml;;
    *) echo "study_worker: the preset is read from main or worktree, not '$from'" >&2; exit 2;;
  esac
  cd "${WORKTREE:?set WORKTREE to a git worktree at commit 6ac1786}" || exit 1
  [ -f "$PRESET" ] || { echo "no preset $PRESET (from $PWD): is WORKTREE a worktree at 6ac1786?" >&2; exit 2; }
  # a machine of another CPU type than the study's trains runs that pair with none of its runs: stop first
  # (the study's runs: its record's, and those in this results folder, a partly trained one included)
  python -m autonorm.analysis.recorded_run "$HERE" --this-cpu --runs "results/$study/runs"
  case $? in 0) ;; 3) exit 4;; *) exit 1;; esac
  E=results/$study/eval/$DATASET
  R=results/$study/runs/$DATASET
  CLAIMS=results/$study/.claims
  run_study "$metric" "$rule1" "${lists[@]}"
}
