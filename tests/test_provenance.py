"""What a run records about its machine: the CPU model and torch's instruction set (env.json
``cpu``), since the same config and seed can train to other numbers on another CPU."""
from __future__ import annotations

import builtins
from pathlib import Path

import pytest
import torch

from autonorm import provenance


def test_cpu_description_names_the_model_and_torchs_instruction_set():
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        pytest.skip("no /proc/cpuinfo on this system")
    model = next((ln.split(":", 1)[1].strip() for ln in cpuinfo.read_text().splitlines()
                  if ln.lower().startswith("model name")), None)
    got = provenance.cpu_description()
    assert got.endswith(f"torch {torch.backends.cpu.get_cpu_capability()}")
    if model:
        assert got.startswith(model + ", ")
    assert provenance.env_info()["cpu"] == got


def test_cpu_description_without_proc_cpuinfo_falls_back_to_platform(monkeypatch):
    real_open = builtins.open

    def no_cpuinfo(path, *a, **k):
        if str(path) == "/proc/cpuinfo":
            raise OSError("not here")
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", no_cpuinfo)
    monkeypatch.setattr(provenance.platform, "processor", lambda: "fallback-cpu")
    assert provenance.cpu_description().startswith("fallback-cpu, torch ")
