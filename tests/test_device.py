"""GPU slots: up to runs_per_gpu concurrent jobs share one GPU, each through its own lock file.

The slot logic needs no GPU: the tests pass a GPU count (2 fake GPUs) and a lock
folder, or fake ``torch.cuda`` for ``resolve_device``.
"""

import copy
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
import yaml

from autonorm.run import device
from autonorm.config.run_config import ConfigError, resolve_run_config
from autonorm.config.workflow import check_config
from autonorm.provenance import run_config_hash

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def held(monkeypatch):
    """This test's lock files; closed (released) at the end."""
    locks = []
    monkeypatch.setattr(device, "_held_locks", locks)
    yield locks
    for f in locks:
        f.close()


def test_two_runs_per_gpu_on_two_gpus_fill_four_slots_then_refuse(tmp_path, held):
    claims = [device.claim_gpu_slot(2, 2, str(tmp_path), wait_s=0) for _ in range(4)]
    # slot-major: with fewer jobs than slots every job has a GPU to itself
    assert claims == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "autonorm-gpu0-slot0.lock", "autonorm-gpu0-slot1.lock", "autonorm-gpu1-slot0.lock", "autonorm-gpu1-slot1.lock"]
    with pytest.raises(device.NoFreeGpuSlot, match=r"gpu=4.*runtime\.runs_per_gpu"):
        device.claim_gpu_slot(2, 2, str(tmp_path), wait_s=0)
    assert len(held) == 4  # the refused claim holds nothing


def test_one_run_per_gpu_is_one_job_per_gpu(tmp_path, held):
    assert [device.claim_gpu_slot(3, 1, str(tmp_path), wait_s=0) for _ in range(3)] == [(0, 0), (1, 0), (2, 0)]
    with pytest.raises(device.NoFreeGpuSlot):
        device.claim_gpu_slot(3, 1, str(tmp_path), wait_s=0)


def test_a_fifth_claim_waits_for_a_slot_to_free_up(tmp_path, held, capsys):
    for _ in range(4):
        device.claim_gpu_slot(2, 2, str(tmp_path), wait_s=0)
    freed = held[2]  # (0, 1)
    threading.Timer(0.5, freed.close).start()  # the job holding (0, 1) ends
    t0 = time.monotonic()
    assert device.claim_gpu_slot(2, 2, str(tmp_path), wait_s=20, poll_s=0.05) == (0, 1)
    assert time.monotonic() - t0 >= 0.4
    assert "waiting for a slot to free up" in capsys.readouterr().err


def test_a_killed_jobs_slot_is_reclaimed(tmp_path, held):
    # A real second process: flock belongs to the process, and the OS drops it
    # when the process dies, even by SIGKILL (no clean-up code runs).
    code = ("import sys, time; from autonorm.run.device import claim_gpu_slot; "
            f"print(claim_gpu_slot(2, 2, {str(tmp_path)!r}, wait_s=0), flush=True); time.sleep(120)")
    job = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline().strip() == "(0, 0)"
        assert device.claim_gpu_slot(2, 2, str(tmp_path), wait_s=0) == (1, 0)  # (0, 0) is the other job's
    finally:
        job.send_signal(signal.SIGKILL)
        job.wait(timeout=30)
    assert (tmp_path / "autonorm-gpu0-slot0.lock").exists()  # the dead job's file is left behind...
    assert device.claim_gpu_slot(2, 2, str(tmp_path), wait_s=0) == (0, 0)  # ...and its slot is free


def test_bad_counts_are_refused(tmp_path):
    with pytest.raises(ValueError, match="runtime.runs_per_gpu"):
        device.claim_gpu_slot(2, 0, str(tmp_path))
    with pytest.raises(ValueError, match="num_gpus"):
        device.claim_gpu_slot(0, 1, str(tmp_path))


@pytest.mark.parametrize("raw, expected", [(None, 1), ("", 1), ("3", 3), ("0", None), ("two", None), ("-1", None)])
def test_runs_per_gpu_from_the_environment(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv(device.RUNS_PER_GPU_ENV, raising=False)
    else:
        monkeypatch.setenv(device.RUNS_PER_GPU_ENV, raw)
    if expected is None:
        with pytest.raises(ValueError, match=r"AUTONORM_RUNS_PER_GPU.*runtime\.runs_per_gpu"):
            device.runs_per_gpu_from_env()
    else:
        assert device.runs_per_gpu_from_env() == expected


@pytest.fixture
def fake_two_gpus(tmp_path, monkeypatch, held):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv(device.LOCK_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(device.RUNS_PER_GPU_ENV, "2")
    monkeypatch.setattr(device, "_claimed", None)
    return tmp_path


def test_resolve_device_claims_one_slot_per_process(fake_two_gpus, held):
    other_job = device.claim_gpu_slot(2, 2, str(fake_two_gpus), wait_s=0)
    assert other_job == (0, 0)
    assert device.resolve_device("cuda") == torch.device("cuda", 1)  # (1, 0): the free GPU first
    # evaluation in the process that trained: the same GPU, no second slot
    assert device.resolve_device("auto") == torch.device("cuda", 1)
    assert len(held) == 2
    assert device.claim_gpu_slot(2, 2, str(fake_two_gpus), wait_s=0) == (0, 1)


def test_visible_devices_set_by_slurm_or_the_user_are_respected(fake_two_gpus, held, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert device.resolve_device("cuda") == torch.device("cuda", 0)
    assert held == [] and list(fake_two_gpus.iterdir()) == []


def test_cpu_resolution():
    assert device.resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert device.resolve_device("auto").type in ("cpu", "mps")


def test_config_key_is_checked_and_does_not_change_a_runs_identity():
    paper = yaml.safe_load((ROOT / "config.yaml").read_text())
    for bad in (0, 1.5, "2"):
        cfg = copy.deepcopy(paper)
        cfg["runtime"]["runs_per_gpu"] = bad
        with pytest.raises(ConfigError, match=r"runtime\.runs_per_gpu"):
            check_config(cfg)
    four = copy.deepcopy(paper)
    four["runtime"]["runs_per_gpu"] = 4
    check_config(four)
    dataset, method = paper["datasets"][0], paper["methods"][0]
    runs = [resolve_run_config(c, dataset, method, 0) for c in (paper, four)]
    # packing jobs onto GPUs is no part of the run: changing it retrains nothing
    assert "runs_per_gpu" not in runs[1]["runtime"]
    assert run_config_hash(runs[0]) == run_config_hash(runs[1])
