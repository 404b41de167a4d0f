#!/usr/bin/env bash
# The GPU path checked in one command, before a long study on a GPU box (or the first minutes of one):
#
#   bash benchmarks/gpu_check.sh results/gpu_check            # under 8 minutes on a modern GPU
#   bash benchmarks/gpu_check.sh --only tests,step OUTDIR     # some stages only
#   bash benchmarks/gpu_check.sh --dry-run OUTDIR             # rehearsal without CUDA (nothing measured)
#
# Stages, in this order, each under its own time limit (`timeout`: a hang in one does not eat the
# others' time; a failed or timed-out stage is reported and the next one runs):
#   tests  the pytest tests marked gpu (tests/test_gpu.py): tensors on the device, bf16 and compile
#          against fp32 eager, two runs sharing a GPU through runs_per_gpu, a checkpoint moved between
#          GPU and CPU, evaluation on the GPU against the CPU's                          (limit 90 s)
#   smoke  the smoke DAG on the GPU, every method, seed 0, ending in its report: runtime.device cuda,
#          runs_per_gpu R (default 4), each train/evaluate job one GPU slot, --resources gpu=GPUs x R (150 s)
#   step   training step autonorm_s / frozen_ln on the GPU (the paper's "< 0.1% per-epoch overhead"),
#          ViT-Lite 8 x 128, patch 4, batch 128: benchmarks/step_time.py --device cuda     (50 s)
#   epoch  benchmarks/gpu_epoch.py --quick: fp32 / bf16 x eager / compile, runs per GPU     (160 s)
#
# OUTDIR (must be empty or new): summary.txt (one line per stage: ok / FAILED / TIMEOUT, its key number,
# its seconds; rewritten after every stage, so a check cut short keeps what it measured), env.txt, and
# per stage <stage>/command.txt and <stage>/output.txt, plus tests/junit.xml, smoke/ (the smoke DAG's
# results folder, with smoke/gpu.yaml, its config), step/step.json, epoch/epoch.json.
#
# Exit status: 0 every stage ok; 1 a stage failed or timed out; 2 usage; 3 no CUDA here (nothing is run
# and nothing written). The code checked is this checkout's (src/ is put first on PYTHONPATH).
# Environment: PYTHON (the interpreter; default python, else python3); AUTONORM_GPU_CHECK_LIMIT_TESTS,
# _SMOKE, _STEP, _EPOCH (seconds); AUTONORM_GPU_CHECK_RUNS_PER_GPU (R); AUTONORM_GPU_CHECK_DRY_RUN=1 (as
# --dry-run). In a dry run every stage runs a stand-in instead of its command; for rehearsing the
# reporting, AUTONORM_GPU_CHECK_DRY_FAIL and AUTONORM_GPU_CHECK_DRY_HANG name stages whose stand-in
# fails or hangs (until its limit).
set -u

STAGES_ALL=(tests smoke step epoch)

usage() {
  cat <<'EOF'
usage: bash benchmarks/gpu_check.sh [--dry-run] [--only STAGE,...] OUTDIR

Checks the GPU path (pytest tests marked gpu, the smoke DAG on the GPU, the training-step ratio
autonorm_s / frozen_ln, GPU epoch times) and writes everything into OUTDIR (empty or new), with a
one-line-per-stage summary in OUTDIR/summary.txt. Stages: tests, smoke, step, epoch.
Exit status: 0 all ok, 1 a stage failed or timed out, 2 usage, 3 no CUDA (nothing run).
--dry-run: the argument handling, folder layout and summary, without CUDA (nothing measured).
EOF
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELPER="$ROOT/benchmarks/_gpu_check.py"
PY="${PYTHON:-$(command -v python || command -v python3 || echo python3)}"

dry="${AUTONORM_GPU_CHECK_DRY_RUN:-0}"
only=""
outdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --dry-run) dry=1 ;;
    --only)
      if [ $# -lt 2 ]; then echo "gpu_check: --only needs a list of stages (${STAGES_ALL[*]})" >&2; exit 2; fi
      shift; only="$1" ;;
    --only=*) only="${1#--only=}" ;;
    -*) echo "gpu_check: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *)
      if [ -n "$outdir" ]; then echo "gpu_check: one OUTDIR only (got '$outdir' and '$1')" >&2; exit 2; fi
      outdir="$1" ;;
  esac
  shift
done
if [ -z "$outdir" ]; then echo "gpu_check: OUTDIR is required" >&2; usage >&2; exit 2; fi
case "$dry" in "" | 0 | false | no) dry=0 ;; *) dry=1 ;; esac

stages=("${STAGES_ALL[@]}")
if [ -n "$only" ]; then
  stages=()
  IFS=',' read -r -a wanted <<<"$only"
  for s in "${wanted[@]}"; do
    case " ${STAGES_ALL[*]} " in
      *" $s "*) stages+=("$s") ;;
      *) echo "gpu_check: unknown stage '$s' in --only (stages: ${STAGES_ALL[*]})" >&2; exit 2 ;;
    esac
  done
  if [ ${#stages[@]} = 0 ]; then echo "gpu_check: --only '$only' names no stage (${STAGES_ALL[*]})" >&2; exit 2; fi
fi

if [ -e "$outdir" ] && { [ ! -d "$outdir" ] || [ -n "$(ls -A "$outdir" 2>/dev/null)" ]; }; then
  echo "gpu_check: OUTDIR '$outdir' exists and is not an empty folder: a check writes into a folder of its" \
    "own (the smoke DAG would reuse an earlier check's runs); give a new one or remove it" >&2
  exit 2
fi

# ---------------------------------------------------------------------------- CUDA, or stop at once
if [ "$dry" = 1 ]; then
  ngpu=1
  machine="DRY RUN: no CUDA probe, nothing measured"
else
  errf="$(mktemp)"
  probe_out="$("$PY" "$HELPER" probe 2>"$errf")"
  probe_rc=$?
  why="$(cat "$errf")"
  rm -f "$errf"
  if [ "$probe_rc" != 0 ]; then
    echo "gpu_check: ${why:-the CUDA probe failed (exit $probe_rc)}" >&2
    echo "gpu_check: nothing was run and nothing was written ('$outdir' untouched). Run this on a machine" \
      "with an NVIDIA GPU and a CUDA build of torch, or rehearse it here with --dry-run." >&2
    exit 3
  fi
  ngpu="${probe_out%%$'\n'*}"
  machine="${probe_out#*$'\n'}"
fi

mkdir -p "$outdir" || exit 2
OUT="$(cd "$outdir" && pwd)"
cd "$ROOT" || exit 2
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg

runs_per_gpu="${AUTONORM_GPU_CHECK_RUNS_PER_GPU:-4}"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+edits"; fi
header="GPU check $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit: $machine"
{
  echo "$header"
  echo "python: $PY; stages: ${stages[*]}; runs per GPU (smoke): $runs_per_gpu; cores: $(nproc)"
  if [ "$dry" = 0 ] && command -v nvidia-smi >/dev/null; then nvidia-smi 2>&1; fi
} >"$OUT/env.txt"

lines=()
T0=$SECONDS
write_summary() {
  {
    echo "$header"
    for l in ${lines[@]+"${lines[@]}"}; do echo "$l"; done
    echo "total $((SECONDS - T0)) s; each stage's output: $OUT/<stage>/output.txt"
  } >"$OUT/summary.txt"
}

# run_stage NAME LIMIT_S CMD...: the command under its limit, its output in OUTDIR/NAME/output.txt,
# then one summary line: ok / FAILED (exit status) / TIMEOUT, the stage's key number, its seconds.
run_stage() {
  local name="$1" limit="$2"
  shift 2
  local d="$OUT/$name"
  mkdir -p "$d"
  printf '%q ' "$@" >"$d/command.txt"
  echo >>"$d/command.txt"
  local cmd=("$@")
  if [ "$dry" = 1 ]; then
    cmd=(echo "dry run: not run:" "$@")
    case " ${AUTONORM_GPU_CHECK_DRY_FAIL:-} " in *" $name "*) cmd=(bash -c 'echo "dry run: this stage fails"; exit 1') ;; esac
    case " ${AUTONORM_GPU_CHECK_DRY_HANG:-} " in *" $name "*) cmd=(sleep 3600) ;; esac
  fi
  echo "[gpu_check] $name: running (limit $limit s), output in $d/output.txt"
  local start=$SECONDS rc
  timeout -k 15 "$limit" "${cmd[@]}" >"$d/output.txt" 2>&1 </dev/null
  rc=$?
  local secs=$((SECONDS - start)) status key
  if [ "$dry" = 1 ]; then
    key="dry run: not measured (command in $name/command.txt)"
  else
    key="$("$PY" "$HELPER" key "$name" "$d" 2>/dev/null || echo "no key number")"
  fi
  case "$rc" in
    0) status=ok ;;
    124 | 137) status=TIMEOUT; key="limit $limit s reached; $key" ;;
    *) status=FAILED; key="exit $rc; $key" ;;
  esac
  lines+=("$(printf '%-6s %-8s %s (%d s)' "$name" "$status" "$key" "$secs")")
  echo "[gpu_check] ${lines[-1]}"
  write_summary
  [ "$rc" = 0 ]
}

echo "[gpu_check] $header"
echo "[gpu_check] stages: ${stages[*]} -> $OUT"
failed=0
for stage in "${stages[@]}"; do
  d="$OUT/$stage"
  case "$stage" in
    tests)
      run_stage tests "${AUTONORM_GPU_CHECK_LIMIT_TESTS:-90}" \
        "$PY" -m pytest -q -m gpu -p no:cacheprovider --junitxml "$d/junit.xml" tests/test_gpu.py || failed=1 ;;
    smoke)
      # The GPU settings as a config file: Snakemake reads nested --config values as strings
      # (runs_per_gpu '4', gpu '1'), which the config schema refuses.
      mkdir -p "$d"
      cat >"$d/gpu.yaml" <<EOF
# written by benchmarks/gpu_check.sh: the smoke preset on the GPU, one seed
results_dir: '${d//\'/\'\'}'
seeds: [0]
runtime:
  device: cuda
  runs_per_gpu: $runs_per_gpu
resources:  # the smoke preset pins gpu: 0 (a CPU box); here every train and evaluate job takes a GPU slot
  train: {threads: 1, gpu: 1, mem_mb: 4000, runtime: 10}
  evaluate: {threads: 1, gpu: 1, mem_mb: 4000, runtime: 10}
EOF
      run_stage smoke "${AUTONORM_GPU_CHECK_LIMIT_SMOKE:-150}" \
        snakemake all --cores "$(nproc)" --resources "gpu=$((ngpu * runs_per_gpu))" \
        --configfile workflow/presets/smoke.yaml "$d/gpu.yaml" || failed=1 ;;
    step)
      run_stage step "${AUTONORM_GPU_CHECK_LIMIT_STEP:-50}" \
        "$PY" benchmarks/step_time.py --device cuda --backbones vision --methods frozen_ln dyt autonorm_s \
        --repeats 50 --warmup 10 --json "$d/step.json" || failed=1 ;;
    epoch)
      run_stage epoch "${AUTONORM_GPU_CHECK_LIMIT_EPOCH:-160}" \
        "$PY" benchmarks/gpu_epoch.py --quick --json "$d/epoch.json" || failed=1 ;;
  esac
done

write_summary
echo
echo "== summary ($OUT/summary.txt)"
cat "$OUT/summary.txt"
exit "$failed"
