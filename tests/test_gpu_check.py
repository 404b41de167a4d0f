"""A dry rehearsal of benchmarks/gpu_check.sh on a machine without CUDA (CUDA is hidden from the script
even where there is some: CUDA_VISIBLE_DEVICES=""): its arguments, the no-CUDA refusal, the folder
layout and the summary of a --dry-run, how a failed and a hung stage are reported, the key number of
each stage read from its outputs, the smoke stage's GPU config against the workflow's checks; and the
tests marked gpu, collected by the default test command and shown as skipped where CUDA is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"
STAGES = ["tests", "smoke", "step", "epoch"]

sys.path.insert(0, str(ROOT / "benchmarks"))
import _gpu_check  # noqa: E402


def run_check(*args, **env):
    full_env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHON=sys.executable,
                    PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    full_env.pop("AUTONORM_GPU_CHECK_DRY_RUN", None)
    full_env.update(env)
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=full_env,
                          timeout=300)


def test_without_cuda_it_stops_at_once_and_writes_nothing(tmp_path):
    out = tmp_path / "gpu check"
    r = run_check(out)
    assert r.returncode == 3
    assert "no CUDA GPU here: torch.cuda.is_available() is False" in r.stderr
    assert "nothing was run and nothing was written" in r.stderr and "--dry-run" in r.stderr
    assert not out.exists() and r.stdout == ""


@pytest.mark.parametrize("args, message", [
    ((), "OUTDIR is required"),
    (("--frobnicate", "x"), "unknown option '--frobnicate'"),
    (("a", "b"), "one OUTDIR only"),
    (("--only", "tests,warp", "x"), "unknown stage 'warp'"),
    (("--only",), "--only needs a list"),
])
def test_bad_arguments_are_refused_with_usage_status(tmp_path, args, message):
    r = run_check(*args)
    assert r.returncode == 2 and message in r.stderr


def test_an_outdir_with_files_is_refused(tmp_path):
    (tmp_path / "earlier.txt").write_text("an earlier check")
    r = run_check("--dry-run", tmp_path)
    assert r.returncode == 2 and "not an empty folder" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier.txt"]


def _summary_lines(out: Path) -> dict[str, str]:
    lines = (out / "summary.txt").read_text().splitlines()
    assert lines[0].startswith("GPU check ") and lines[-1].startswith("total ")
    return {line.split()[0]: line for line in lines[1:-1]}


def test_dry_run_lays_out_every_stage_and_a_summary(tmp_path):
    out = tmp_path / "gpu check"  # a space in the path
    r = run_check("--dry-run", out)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(["env.txt", "summary.txt", *STAGES])
    for stage in STAGES:
        assert (out / stage / "output.txt").read_text().startswith("dry run: not run:")
        assert (out / stage / "command.txt").read_text().strip()
    lines = _summary_lines(out)
    assert list(lines) == STAGES
    assert all(lines[s].split()[1] == "ok" and "dry run: not measured" in lines[s] for s in STAGES)
    assert r.stdout.rstrip().endswith((out / "summary.txt").read_text().rstrip())  # printed at the end
    # the commands a real check runs
    assert "pytest -q -m gpu" in (out / "tests" / "command.txt").read_text()
    assert "--device cuda --backbones vision" in (out / "step" / "command.txt").read_text()
    assert "gpu_epoch.py --quick" in (out / "epoch" / "command.txt").read_text()
    smoke = (out / "smoke" / "command.txt").read_text()
    assert "snakemake all" in smoke and "--resources gpu=4" in smoke and "workflow/presets/smoke.yaml" in smoke


def test_only_runs_the_stages_named(tmp_path):
    r = run_check("--dry-run", "--only", "step,tests", tmp_path / "out")
    assert r.returncode == 0
    assert list(_summary_lines(tmp_path / "out")) == ["step", "tests"]
    assert not (tmp_path / "out" / "smoke").exists()


def test_a_failed_and_a_hung_stage_are_reported_and_the_next_stages_still_run(tmp_path):
    out = tmp_path / "out"
    r = run_check("--dry-run", out, AUTONORM_GPU_CHECK_DRY_FAIL="tests", AUTONORM_GPU_CHECK_DRY_HANG="smoke",
                  AUTONORM_GPU_CHECK_LIMIT_SMOKE="1")
    assert r.returncode == 1
    lines = _summary_lines(out)
    assert lines["tests"].split()[1:3] == ["FAILED", "exit"]
    assert lines["smoke"].split()[1] == "TIMEOUT" and "limit 1 s reached" in lines["smoke"]
    assert lines["step"].split()[1] == "ok" and lines["epoch"].split()[1] == "ok"


def test_the_smoke_stage_config_passes_the_workflows_checks_on_a_gpu_box(tmp_path):
    """The config file the smoke stage adds to the smoke preset: the workflow's checks accept it where
    CUDA is available, and it gives every train and evaluate job a GPU slot, the runs device cuda
    and one seed, in the results folder of the check."""
    from autonorm.config.run_config import resolve_run_config
    from autonorm.config.workflow import check_config, load_config

    out = tmp_path / "it's here"  # a quote and a space in the path
    assert run_check("--dry-run", "--only", "smoke", out).returncode == 0
    gpu_yaml = out / "smoke" / "gpu.yaml"
    cfg = load_config(ROOT / "config.yaml", ROOT / "workflow/presets/smoke.yaml", gpu_yaml)
    check_config(cfg, check_device=True, cuda_available=True)
    assert cfg["results_dir"] == str(out / "smoke") and cfg["seeds"] == [0]
    assert cfg["runtime"]["device"] == "cuda" and cfg["runtime"]["runs_per_gpu"] == 4
    assert cfg["runtime"]["threads"] == 1  # the rest of the preset's runtime block stays
    for rule in ("train", "evaluate"):
        assert cfg["resources"][rule]["gpu"] == 1
    run = resolve_run_config(cfg, "smoke_digits", "autonorm_s", 0)
    assert run["runtime"]["device"] == "cuda" and run["out_dir"].startswith(str(out / "smoke"))
    assert yaml.safe_load(gpu_yaml.read_text())["resources"]["train"]["gpu"] == 1


# --------------------------------------------------------------------------- each stage's key number
def test_key_numbers_are_read_from_each_stages_outputs(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "output.txt").write_text("......F\nFAILED tests/test_gpu.py::test_x - assert 1 == 2\n"
                                      "1 failed, 6 passed in 41.20s\n")
    assert _gpu_check.key_tests(tests) == "1 failed, 6 passed in 41.20s"

    smoke = tmp_path / "smoke"
    for i, (method, device, status) in enumerate([("frozen_ln", "cuda:0", "ok"), ("autonorm_s", "cuda:0", "ok"),
                                                  ("dyt", "cpu", "diverged")]):
        run = smoke / "runs" / "smoke_digits" / method / "seed0"
        run.mkdir(parents=True)
        (run / "env.json").write_text(json.dumps({"device": device}))
        (run / "status.json").write_text(json.dumps({"status": status}))
        log = smoke / "logs" / "train" / "smoke_digits" / method / "seed0.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"=== attempt started\nautonorm: GPU 0, slot {i % 2} of 4\nepoch 1/6 ...\n")
    key = _gpu_check.key_smoke(smoke)
    assert key.startswith("no report.md") and "2/3 runs ok, 2 on cuda" in key and "2 GPU slot(s) used (4 runs" in key
    (smoke / "report.md").write_text("# report")
    assert _gpu_check.key_smoke(smoke).startswith(f"report {smoke / 'report.md'}; ")

    step = tmp_path / "step"
    step.mkdir()
    assert _gpu_check.key_step(step).startswith("no step.json")
    (step / "step.json").write_text(json.dumps({"judged_on": "wall", "ratios": {
        "vision/frozen_ln": {"median": 1.0, "best": 1.0, "wall": 1.0},
        "vision/autonorm_s": {"median": 1.2345, "best": 1.2, "wall": 1.2345},
        "vision/dyt": {"median": 1.05, "best": 1.04, "wall": 1.05}}}))
    assert _gpu_check.key_step(step) == "autonorm_s / frozen_ln step 1.234x (median wall, best-of 1.200x); dyt 1.050x"

    epoch = tmp_path / "epoch"
    epoch.mkdir()
    row = lambda m, bf16, comp, s: {"method": m, "bf16": bf16, "compile": comp, "epoch_s": s,  # noqa: E731
                                    "runs_per_gpu": 40 if m == "frozen_ln" else 31}
    (epoch / "epoch.json").write_text(json.dumps({"variants": [
        row("frozen_ln", False, False, 10.0), row("frozen_ln", False, True, 6.0), row("frozen_ln", True, False, 7.5),
        {"method": "frozen_ln", "bf16": True, "compile": True, "error": "BackendCompilerFailed: no cc"},
        row("autonorm_s", False, False, 13.0)]}))
    assert _gpu_check.key_epoch(epoch) == (
        "frozen_ln epoch s: fp32 10.0, fp32+compile 6.0, bf16 7.5, bf16+compile failed (BackendCompilerFailed: no cc); "
        "autonorm_s fp32 1.30x; <= 31 runs per GPU (memory bound)")


# --------------------------------------------------------------------------- the gpu tests, where CUDA is absent
def test_gpu_tests_are_collected_by_the_default_command_and_shown_as_skipped():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "gpu", "--strict-markers",
                                "-p", "no:cacheprovider", "tests/test_gpu.py"],
                               cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    ids = [line for line in collected.stdout.splitlines() if line.startswith("tests/test_gpu.py::")]
    assert len(ids) == 7 and any("checkpoint_written_on_the_gpu" in i for i in ids)
    # the default command (addopts: -ra -m 'not slow') runs them: skipped, with the reason shown
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_gpu.py"],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "7 skipped" in r.stdout
    shown = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED [")]
    assert all("tests/test_gpu.py:" in line and "no CUDA GPU here" in line for line in shown)
    assert sum(int(line.split("[", 1)[1].split("]", 1)[0]) for line in shown) == 7  # -ra: each one shown
