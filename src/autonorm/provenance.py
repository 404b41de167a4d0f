"""What every run records about where and with what it ran."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
import time
from importlib import metadata


def config_hash(cfg: dict) -> str:
    """First 16 hex digits of the sha256 of ``cfg`` as canonical JSON (keys sorted)."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:16]


#: Run-config keys that say where files live, not what is computed: moving a
#: results tree must not change a run's identity.
PATH_ONLY_KEYS = ("out_dir", "data_dir")
#: Execution settings the CLI may override after the workflow has hashed the
#: config (``autonorm-train --threads``); they do not define the experiment.
EXECUTION_ONLY_KEYS = {"runtime": ("threads",)}
#: Paths inside a block: where the run reads something, not what it is (a distillation's
#: teacher is identified by its ``teacher_config_hash``; its folder moves with ``results_dir``).
NESTED_PATH_KEYS = {"distill": ("teacher_run_dir",)}


def run_config_hash(cfg: dict) -> str:
    """The identity of a training run: ``config_hash`` of its resolved run config
    without path-only and execution-only keys. Every output of a run records it;
    evaluation and the report compare it with the run folder's ``config.json``."""
    core = {k: v for k, v in cfg.items() if k not in PATH_ONLY_KEYS}
    for block, keys in [*EXECUTION_ONLY_KEYS.items(), *NESTED_PATH_KEYS.items()]:
        if isinstance(core.get(block), dict):
            core[block] = {k: v for k, v in core[block].items() if k not in keys}
    return config_hash(core)


def _version(pkg: str) -> str | None:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=os.path.dirname(__file__))
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_description() -> str | None:
    """The CPU model and the instruction set torch dispatches to ('Intel(R) Xeon(R) Processor,
    torch AVX512'): two machines of other CPUs may round floats differently, so the same config and
    seed can train to other numbers there (studies/*/README.md)."""
    import torch

    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    model = model or platform.processor() or platform.machine() or None
    try:
        capability = torch.backends.cpu.get_cpu_capability()
    except (AttributeError, RuntimeError):
        capability = None
    parts = [x for x in (model, f"torch {capability}" if capability else None) if x]
    return ", ".join(parts) or None


def env_info(device=None) -> dict:
    """Where and with what this process runs (``device``: the torch.device of the run, or None)."""
    import torch  # here: run_config_hash must import without torch (autonorm-evaluate's fast path)

    info = {
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "packages": {p: _version(p) for p in ("autonorm-repro", "torch", "torchvision", "numpy", "scipy",
                                                  "scikit-learn", "pandas", "statsmodels", "snakemake")},
        "torch_threads": torch.get_num_threads(),
        "cpu": cpu_description(),
        "git_commit": _git_commit(),
        # the code that computes learned numbers, as imported (autonorm.fingerprint)
        "training_code": __import__("autonorm").TRAINING_CODE_AT_IMPORT,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "device": str(device) if device is not None else None,
    }
    if device is not None and device.type == "cuda":
        info["device_name"] = torch.cuda.get_device_name(device)
        info["cuda"] = torch.version.cuda
    return info
