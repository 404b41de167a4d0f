#!/usr/bin/env bash
# Start a throwaway single-node SLURM cluster on localhost (Debian packages,
# no systemd), run a Snakemake workflow through profiles/slurm, check that
# jobs really went through sbatch with a (fake) GPU, and always tear it down.
#
# Usage (as root, from anywhere):
#   .ci/slurm/run_slurm_test.sh                 # project smoke DAG (default)
#   .ci/slurm/run_slurm_test.sh --selftest      # throwaway Snakefile, grouped and ungrouped
#   .ci/slurm/run_slurm_test.sh --cmd 'snakemake all --profile profiles/slurm --profile $SLURM_CI_PROFILE ...'
#
# The command runs in a temporary copy of the repository (or of
# .ci/slurm/selftest) under `timeout`. The command can use these variables:
#   $SLURM_CI_PROFILE  overlay profile for this node (cores, memory, squeue
#                      status checks); pass it as a second --profile
#   $SLURM_CI_LOGDIR   SLURM log folder the checks look at (logs/slurm)
#
# Environment:
#   SLURM_TEST_TIMEOUT  seconds for one snakemake run (default 1500)
#   SLURM_TEST_KEEP=1   keep the temporary folder (printed at the end)
#   SLURM_TEST_NO_APT=1 never call apt-get (SKIPPED if slurm is missing)
#   SLURM_SMOKE_CONFIG  extra --config for the default run, e.g. "methods=[frozen_ln,autonorm_s] seeds=[0]"
#   SLURM_TEST_GPUS     fake GPUs on the node, 1..4 (default 2, 1 on a 1-CPU box)
#
# Exit status: 0 = passed or SKIPPED (slurm cannot be installed here),
# 1 = a check failed, 2 = usage error.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TIMEOUT="${SLURM_TEST_TIMEOUT:-1500}"
MODE=default
USER_CMD=""

while [ $# -gt 0 ]; do
    case "$1" in
        --selftest) MODE=selftest ;;
        --cmd) shift; MODE=custom; USER_CMD="${1:?--cmd needs a command}" ;;
        -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

log() { echo "[slurm-ci $(date +%H:%M:%S)] $*"; }
skip() { echo "SKIPPED: SLURM test not run: $*"; exit 0; }
fail() { echo "FAILED: $*"; FAILED=1; }
FAILED=0
T_START=$(date +%s)

# ---------------------------------------------------------------- install ---
[ "$(id -u)" -eq 0 ] || skip "needs root (installs packages and starts daemons)"
need_bins="slurmctld slurmd sbatch squeue sinfo scontrol munged munge"
missing() { for b in $need_bins; do command -v "$b" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$b" >/dev/null 2>&1 || return 0; done; return 1; }
export PATH="$PATH:/usr/sbin:/sbin"
if missing; then
    [ "${SLURM_TEST_NO_APT:-0}" = 1 ] && skip "slurm/munge not installed and SLURM_TEST_NO_APT=1"
    command -v apt-get >/dev/null 2>&1 || skip "no apt-get on this machine"
    log "installing slurmctld slurmd slurm-client munge with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get update -q >/tmp/slurm-ci-apt.log 2>&1; then
        tail -5 /tmp/slurm-ci-apt.log; skip "apt-get update failed (see /tmp/slurm-ci-apt.log)"
    fi
    if ! apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge >>/tmp/slurm-ci-apt.log 2>&1; then
        tail -5 /tmp/slurm-ci-apt.log; skip "apt-get install slurmctld slurmd slurm-client munge failed (see /tmp/slurm-ci-apt.log)"
    fi
    missing && skip "packages installed but binaries still missing"
fi
command -v snakemake >/dev/null 2>&1 || { echo "FAILED: snakemake not on PATH"; exit 1; }
python3 -c "import snakemake_executor_plugin_slurm" 2>/dev/null \
    || { echo "FAILED: snakemake-executor-plugin-slurm is not installed"; exit 1; }
log "$(slurmctld -V), snakemake $(snakemake --version)," \
    "plugin $(python3 -c 'from importlib.metadata import version as v; print(v("snakemake-executor-plugin-slurm"))')"

if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
    echo "FAILED: a slurmctld/slurmd is already running here; not touching it"; exit 1
fi

# ------------------------------------------------------------------ state ---
WORK="$(mktemp -d /tmp/slurm-ci.XXXXXX)"
STATE="$WORK/state"
mkdir -p "$STATE/ctld" "$STATE/d"
CONF_DIR=/etc/slurm          # srun inside jobs drops SLURM_CONF, so use the default path
mkdir -p "$CONF_DIR"
for f in slurm.conf gres.conf; do
    [ -e "$CONF_DIR/$f" ] && cp -a "$CONF_DIR/$f" "$STATE/$f.orig"
done
STARTED_MUNGED=""
SNAKE_PGID=""

teardown() {
    local rc=$?
    trap - EXIT INT TERM
    log "teardown"
    if [ -n "$SNAKE_PGID" ] && kill -0 "$SNAKE_PGID" 2>/dev/null; then
        kill -TERM -- "-$SNAKE_PGID" 2>/dev/null; sleep 2; kill -KILL -- "-$SNAKE_PGID" 2>/dev/null
    fi
    if [ -f "$STATE/slurmctld.pid" ]; then
        timeout 10 scancel --full --user=root >/dev/null 2>&1
        timeout 10 scontrol shutdown >/dev/null 2>&1
        sleep 2
    fi
    local pf pid
    for pf in "$STATE/slurmd.pid" "$STATE/slurmctld.pid"; do
        [ -f "$pf" ] || continue
        pid="$(cat "$pf" 2>/dev/null)"
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null; sleep 1; kill -KILL "$pid" 2>/dev/null
        fi
    done
    if [ -n "$STARTED_MUNGED" ] && kill -0 "$STARTED_MUNGED" 2>/dev/null; then
        kill -TERM "$STARTED_MUNGED" 2>/dev/null
    fi
    for f in slurm.conf gres.conf; do
        if [ -e "$STATE/$f.orig" ]; then cp -a "$STATE/$f.orig" "$CONF_DIR/$f"; else rm -f "$CONF_DIR/$f"; fi
    done
    if [ "${SLURM_TEST_KEEP:-0}" = 1 ] || [ "$FAILED" != 0 ]; then
        log "kept $WORK (daemon logs in $STATE)"
    else
        rm -rf "$WORK"
    fi
    log "total wall time $(( $(date +%s) - T_START ))s"
    [ "$rc" -ne 0 ] && exit "$rc"
    [ "$FAILED" != 0 ] && exit 1
    exit 0
}
trap teardown EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ munge ---
mkdir -p /etc/munge /run/munge /var/log/munge /var/lib/munge
if [ ! -s /etc/munge/munge.key ]; then
    log "creating munge key"
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
fi
chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/log/munge /var/lib/munge 2>/dev/null
chmod 0700 /etc/munge; chmod 0400 /etc/munge/munge.key; chmod 0755 /run/munge
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged already running; using it"
else
    rm -f /run/munge/munged.pid
    if id munge >/dev/null 2>&1; then
        runuser -u munge -- munged || { echo "FAILED: munged did not start"; FAILED=1; exit 1; }
    else
        munged --force || { echo "FAILED: munged did not start"; FAILED=1; exit 1; }
    fi
    for _ in $(seq 20); do [ -s /run/munge/munged.pid ] && break; sleep 0.2; done
    STARTED_MUNGED="$(cat /run/munge/munged.pid 2>/dev/null)"
    munge -n | unmunge >/dev/null || { echo "FAILED: munge round trip"; FAILED=1; exit 1; }
fi

# -------------------------------------------------------------- slurm.conf ---
HOST="$(hostname -s)"
CPUS="$(nproc)"
MEM_TOTAL="$(free -m | awk '/^Mem:/{print $2}')"
MARGIN=$(( MEM_TOTAL / 10 )); [ "$MARGIN" -lt 1024 ] && MARGIN=1024
MEM=$(( MEM_TOTAL - MARGIN ))
# Fake GPUs: gres.conf (GPU 0 = /dev/null); slurmd only needs an existing
# device file per GPU, so extra GPUs use other harmless character devices.
FAKE_DEVS=(/dev/null /dev/zero /dev/full /dev/urandom)
GPUS="${SLURM_TEST_GPUS:-$(( CPUS >= 2 ? 2 : 1 ))}"
case "$GPUS" in [1-4]) ;; *) echo "SLURM_TEST_GPUS must be 1..4"; exit 2 ;; esac
sed -e "s|@HOST@|$HOST|g; s|@CPUS@|$CPUS|g; s|@MEM@|$MEM|g; s|@STATE@|$STATE|g; s|@GPUS@|$GPUS|g" \
    "$HERE/slurm.conf.in" > "$CONF_DIR/slurm.conf"
cp "$HERE/gres.conf" "$CONF_DIR/gres.conf"
for i in $(seq 1 $(( GPUS - 1 ))); do
    echo "Name=gpu Type=fake File=${FAKE_DEVS[$i]}" >> "$CONF_DIR/gres.conf"
done
log "node $HOST: CPUs=$CPUS RealMemory=${MEM}MB (of ${MEM_TOTAL}MB) Gres=gpu:fake:$GPUS (${FAKE_DEVS[*]:0:$GPUS})"

# ---------------------------------------------------------------- daemons ---
slurmctld || { fail "slurmctld did not start"; tail -20 "$STATE/slurmctld.log"; exit 1; }
for _ in $(seq 30); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 1; done
slurmd || { fail "slurmd did not start"; tail -20 "$STATE/slurmd.log"; exit 1; }
state=""
for _ in $(seq 60); do
    state="$(sinfo -h -N -o '%T' 2>/dev/null | head -1)"
    [ "$state" = idle ] && break
    sleep 1
done
if [ "$state" != idle ]; then
    fail "node not idle after 60s (state: '${state:-none}')"
    sinfo -N -l; tail -20 "$STATE/slurmd.log"; tail -20 "$STATE/slurmctld.log"; exit 1
fi
sinfo -N -o '%N %T cpus=%c mem=%m gres=%G'

# Overlay profile for this node: applied after profiles/slurm, replaces these
# top-level keys only. sacct does not work without accounting -> squeue.
export SLURM_CI_PROFILE="$WORK/ci-profile"
export SLURM_CI_LOGDIR="logs/slurm"
mkdir -p "$SLURM_CI_PROFILE"
cat > "$SLURM_CI_PROFILE/config.yaml" <<EOF
cores: $CPUS
resources:
  gpu: 1
  mem_mb: $MEM
slurm-status-command: squeue
slurm-init-seconds-before-status-checks: 5
EOF

# --------------------------------------------------------------- run+check ---
submitted_since() {  # job submissions in slurmctld log after byte offset $1
    tail -c +"$(( $1 + 1 ))" "$STATE/slurmctld.log" | grep -c '_slurm_rpc_submit_batch_job: JobId='
}

# run_case NAME DIR CMD [EXPECT_GPU_FILE_GLOB]
run_case() {
    local name="$1" dir="$2" cmd="$3" gpu_glob="${4:-}"
    local off t0 t1 rc n_sub n_logs
    off="$(stat -c %s "$STATE/slurmctld.log")"
    log "[$name] in $dir: $cmd"
    t0=$(date +%s)
    ( cd "$dir" && exec setsid timeout --kill-after=30 "$TIMEOUT" bash -c "$cmd" ) \
        > "$WORK/$name.snakemake.log" 2>&1 &
    SNAKE_PGID=$!
    wait "$SNAKE_PGID"; rc=$?
    SNAKE_PGID=""
    t1=$(date +%s)
    n_sub="$(submitted_since "$off")"
    n_logs="$(find "$dir/$SLURM_CI_LOGDIR" -name '*.log' -type f 2>/dev/null | wc -l)"
    echo "RESULT [$name] rc=$rc wall=$(( t1 - t0 ))s sbatch_submissions=$n_sub slurm_log_files=$n_logs"
    # jobs of this run as slurmctld saw them (kept for MinJobAge=600s)
    squeue --states=all --sort=i \
        -O 'JobID:6,State:11,NumCPUs:5,MinMemory:8,TimeLimit:11,tres-per-job:12,tres-alloc:45,Comment:30' \
        | sed 's/^/    /' | tail -n "$(( n_sub ))"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "[$name] timed out after ${TIMEOUT}s"
    elif [ "$rc" -ne 0 ]; then
        fail "[$name] snakemake exited with $rc"
    fi
    if [ "$rc" -ne 0 ]; then
        tail -40 "$WORK/$name.snakemake.log"
        squeue --states=all -o '%i %j %T %r' | tail -20
    fi
    [ "$n_sub" -gt 0 ] || fail "[$name] no sbatch submission reached slurmctld"
    [ "$n_logs" -gt 0 ] || fail "[$name] no SLURM log files under $dir/$SLURM_CI_LOGDIR"
    grep -q "has been submitted with SLURM jobid" "$WORK/$name.snakemake.log" \
        || fail "[$name] snakemake log shows no SLURM submission"
    if [ -n "$gpu_glob" ]; then
        local f found=0
        for f in $dir/$gpu_glob; do
            [ -f "$f" ] || continue
            found=1
            grep -q 'CUDA_VISIBLE_DEVICES=[0-9]' "$f" \
                || fail "[$name] CUDA_VISIBLE_DEVICES not set in $f: $(cat "$f")"
        done
        [ "$found" = 1 ] || fail "[$name] no GPU job output matching $gpu_glob"
        echo "GPU [$name] $(cat $dir/$gpu_glob 2>/dev/null | grep -o 'CUDA_VISIBLE_DEVICES=[^ ]*' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
    fi
    eval "N_SUB_$name=$n_sub"
}

copy_tree() {  # copy $1 to $2 without VCS/outputs
    mkdir -p "$2"
    tar -C "$1" --exclude=.git --exclude=.snakemake --exclude=results --exclude=logs \
        --exclude=__pycache__ --exclude=.pytest_cache -cf - . | tar -C "$2" -xf -
}

case "$MODE" in
selftest)
    base="snakemake --profile $REPO/profiles/slurm --profile $SLURM_CI_PROFILE --quiet host all"
    for g in 0 1; do
        d="$WORK/selftest_group$g"
        mkdir -p "$d"; cp "$HERE/selftest/Snakefile" "$d/"
        run_case "group$g" "$d" "$base --config group=$g" "out/train_*.txt"
        # retry with more runtime: aggregate fails on attempt 1 on purpose
        if [ -f "$d/out/aggregate_attempts.txt" ]; then
            echo "RETRY [group$g] $(tr '\n' ';' < "$d/out/aggregate_attempts.txt")"
            r1="$(sed -n 's/^attempt=1 runtime=\([0-9]*\).*/\1/p' "$d/out/aggregate_attempts.txt")"
            r2="$(sed -n 's/^attempt=2 runtime=\([0-9]*\).*/\1/p' "$d/out/aggregate_attempts.txt")"
            [ -n "$r1" ] && [ -n "$r2" ] && [ "$r2" -gt "$r1" ] \
                || fail "[group$g] retry did not get more runtime (attempt1=$r1 attempt2=$r2)"
        else
            fail "[group$g] aggregate never ran"
        fi
        find "$d/$SLURM_CI_LOGDIR" -name '*.log' | sed "s|^$d/|    |" | sort
    done
    echo "SUMMARY sbatch submissions: ungrouped=${N_SUB_group0:-?} grouped=${N_SUB_group1:-?}"
    if [ -n "${N_SUB_group0:-}" ] && [ -n "${N_SUB_group1:-}" ] && [ "$N_SUB_group1" -ge "$N_SUB_group0" ]; then
        fail "grouping did not reduce the number of sbatch submissions"
    fi
    ;;
default|custom)
    d="$WORK/repo"
    copy_tree "$REPO" "$d"
    if [ "$MODE" = default ]; then
        [ -f "$d/workflow/presets/smoke.yaml" ] || { fail "workflow/presets/smoke.yaml missing"; exit 1; }
        # target before --configfile: --configfile takes several values and would eat "all"
        # --quiet host: the log lists every job and submission (the workflow profile keeps the console quiet)
        USER_CMD="snakemake all --profile profiles/slurm --profile \$SLURM_CI_PROFILE --quiet host --configfile workflow/presets/smoke.yaml"
        # SLURM_SMOKE_CONFIG narrows the grid (CI: fewer methods/seeds, the whole DAG still runs)
        [ -n "${SLURM_SMOKE_CONFIG:-}" ] && USER_CMD="$USER_CMD --config $SLURM_SMOKE_CONFIG"
    fi
    # train logs print CUDA_VISIBLE_DEVICES; check them if present
    run_case "run" "$d" "$USER_CMD"
    # the train rule writes CUDA_VISIBLE_DEVICES=<value> into its log
    cvd="$(grep -rhos 'CUDA_VISIBLE_DEVICES=[^ ${]*' "$d/results" "$d/logs" 2>/dev/null | grep -v '=$')"
    if [ -n "$cvd" ]; then
        echo "GPU [run] $(echo "$cvd" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
        echo "$cvd" | grep -q 'CUDA_VISIBLE_DEVICES=[0-9]' \
            || fail "[run] CUDA_VISIBLE_DEVICES printed but never set to a device"
        echo "$cvd" | grep -q 'CUDA_VISIBLE_DEVICES=unset' \
            && fail "[run] some jobs ran without a GPU (CUDA_VISIBLE_DEVICES=unset)"
    elif [ "$MODE" = default ]; then
        fail "[run] no CUDA_VISIBLE_DEVICES line in the train logs"
    else
        log "[run] no CUDA_VISIBLE_DEVICES line found in logs (train rule does not print it?)"
    fi
    if [ "$MODE" = default ]; then
        rep="$d/results/smoke/report.md"
        if [ -s "$rep" ] && grep -q "^## Runs" "$rep" && [ -s "$d/results/smoke/tables/summary.csv" ]; then
            n_fig=$(find "$d/results/smoke/figures" -name '*.png' -size +5k | wc -l)
            [ "$n_fig" -ge 5 ] || fail "[run] only $n_fig non-trivial figures"
            grep -q "status" "$d/results/smoke/tables/runs.csv" && ! grep -qE ",(missing|diverged)," "$d/results/smoke/tables/runs.csv" \
                || fail "[run] runs.csv lists missing or diverged runs"
            log "[run] report complete: $rep ($(wc -l < "$rep") lines, $n_fig figures)"
        else
            fail "[run] report or tables missing under $d/results/smoke"
        fi
    fi
    ;;
esac

if [ "$FAILED" = 0 ]; then
    echo "PASSED: SLURM profile test ($MODE) in $(( $(date +%s) - T_START ))s"
fi
