"""Each concurrent job on a multi-GPU box claims its own GPU through a lock file."""

import os
import subprocess
import sys

import torch

from autonorm import device


def test_claims_distinct_gpus_then_shares(tmp_path, monkeypatch):
    monkeypatch.setattr(device, "_held_locks", [])
    assert device.claim_gpu(2, str(tmp_path)) == 0
    assert device.claim_gpu(2, str(tmp_path)) == 1
    assert device.claim_gpu(2, str(tmp_path)) == os.getpid() % 2  # more jobs than GPUs
    for f in device._held_locks:
        f.close()


def test_lock_is_released_when_the_job_ends(tmp_path, monkeypatch):
    code = (f"from autonorm.device import claim_gpu; print(claim_gpu(2, {str(tmp_path)!r}))")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert first.stdout.strip() == second.stdout.strip() == "0"


def test_cpu_resolution():
    assert device.resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert device.resolve_device("auto").type in ("cpu", "mps")
