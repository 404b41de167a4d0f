"""Device choice and per-job GPU assignment.

On a local multi-GPU box Snakemake runs several training jobs at once
(``--resources gpu=N`` bounds how many); each job must get its own GPU. When
``CUDA_VISIBLE_DEVICES`` is already set (SLURM, or the user) we respect it;
otherwise a job claims the first GPU whose lock file it can lock, and holds the
lock until the process exits (the OS releases it even after a crash).
"""

from __future__ import annotations

import fcntl
import os
import tempfile

import torch

_held_locks = []  # keep the lock files open for the life of the process


def claim_gpu(num_gpus: int, lock_dir: str | None = None) -> int:
    lock_dir = lock_dir or os.environ.get("AUTONORM_GPU_LOCK_DIR", tempfile.gettempdir())
    for i in range(num_gpus):
        f = open(os.path.join(lock_dir, f"autonorm-gpu{i}.lock"), "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            continue
        _held_locks.append(f)
        return i
    # More jobs than GPUs (no --resources gpu=N given): share round-robin by pid.
    return os.getpid() % num_gpus


def resolve_device(name: str = "auto") -> torch.device:
    if name == "auto":
        if torch.cuda.is_available():
            name = "cuda"
        elif getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            name = "mps"
        else:
            name = "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("device 'cuda' requested but CUDA is not available")
        n = torch.cuda.device_count()
        index = 0 if os.environ.get("CUDA_VISIBLE_DEVICES") or n == 1 else claim_gpu(n)
        return torch.device("cuda", index)
    return torch.device(name)
