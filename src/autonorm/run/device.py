"""Device choice and per-job GPU slot assignment.

On a local GPU box Snakemake runs several training/evaluation jobs at once
(``--resources gpu=N`` bounds how many; each job declares ``gpu=1``). A small run
(ViT-Lite, batch 128) uses a fraction of a large GPU, so up to ``runs_per_gpu``
jobs may share one GPU (config key ``runtime.runs_per_gpu``; the Snakefile
passes it to the jobs as ``AUTONORM_RUNS_PER_GPU``). Each GPU has that many
slots; a job claims one slot by locking its lock file
(``autonorm-gpu<g>-slot<k>.lock`` under ``$AUTONORM_GPU_LOCK_DIR`` or
``$TMPDIR``) and holds the lock for the life of the process: the OS drops an
``flock`` when the process exits, also after a crash or ``kill -9``, so a dead
job's slot is free again without any clean-up. Slots are taken slot-major
(slot 0 of every GPU before slot 1 of any), so with fewer jobs than slots each
job gets a GPU of its own. When every slot is busy the job waits for one.

When ``CUDA_VISIBLE_DEVICES`` is already set (SLURM sets it per job, or the
user) it is respected: the job uses the first visible GPU and claims nothing.
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

RUNS_PER_GPU_ENV = "AUTONORM_RUNS_PER_GPU"
LOCK_DIR_ENV = "AUTONORM_GPU_LOCK_DIR"

_held_locks = []  # keep the lock files open for the life of the process
_claimed: tuple[int, int] | None = None  # this process's (gpu, slot): a second resolve_device reuses it


class NoFreeGpuSlot(RuntimeError):
    """Every (GPU, slot) lock is held and the caller chose not to wait (longer)."""


def runs_per_gpu_from_env() -> int:
    """``AUTONORM_RUNS_PER_GPU`` (set by the Snakefile from ``runtime.runs_per_gpu``), else 1."""
    raw = os.environ.get(RUNS_PER_GPU_ENV, "").strip()
    if not raw:
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{RUNS_PER_GPU_ENV}={raw!r}: expected an integer >= 1 "
                         "(set from config key runtime.runs_per_gpu)")
    return value


def lock_path(lock_dir: str, gpu: int, slot: int) -> str:
    return os.path.join(lock_dir, f"autonorm-gpu{gpu}-slot{slot}.lock")


#: /proc/cpuinfo flags of an x86 CPU that computes bf16 matrix products natively (AVX-512 BF16,
#: AMX); elsewhere torch emulates bf16 on the CPU, slower than fp32
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_has_native_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this machine's CPU has native bf16 (a flag of NATIVE_BF16_FLAGS in ``cpuinfo``);
    False where that file is not there to say (not Linux)."""
    try:
        with open(cpuinfo) as f:
            flags = {w for line in f if line.startswith("flags") for w in line.split(":", 1)[1].split()}
    except OSError:
        return False
    return any(flag in flags for flag in NATIVE_BF16_FLAGS)


def bf16_autocast(requested: bool, device_type: str) -> bool:
    """Whether a run that asks for ``runtime.bf16`` trains under bf16 autocast on ``device_type``.
    On CUDA and on a CPU with native bf16 it does; anywhere else the request is refused (ValueError)
    rather than ignored: the run's config says bf16, so training it in fp32 would record a setting
    it did not use, and emulated bf16 is slower than fp32."""
    if not requested:
        return False
    if device_type == "cuda" or (device_type == "cpu" and cpu_has_native_bf16()):
        return True
    where = ("this CPU has no native bf16 (none of the /proc/cpuinfo flags "
             + ", ".join(NATIVE_BF16_FLAGS) + "); emulated bf16 is slower than fp32"
             if device_type == "cpu" else f"bf16 autocast is used on CUDA and on CPUs only, not on {device_type}")
    raise ValueError(f"runtime.bf16 is true but {where}: set runtime.bf16 to false for this machine "
                     "(it is part of each run's identity, so the runs are retrained in fp32)")


def _open_lock_file(path: str) -> int:
    # Read-only is enough for flock, so a lock file another user created (mode
    # 0644) still coordinates both users' jobs; opening an existing file without
    # O_CREAT also passes Linux's protected_regular check in a sticky /tmp.
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)


def _try_lock(path: str):
    fd = _open_lock_file(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def try_claim_slot(num_gpus: int, runs_per_gpu: int, lock_dir: str) -> tuple[int, int] | None:
    """One pass over the slots, slot-major; the first lock we get is kept. None if all are held."""
    for slot in range(runs_per_gpu):
        for gpu in range(num_gpus):
            f = _try_lock(lock_path(lock_dir, gpu, slot))
            if f is not None:
                _held_locks.append(f)
                return gpu, slot
    return None


def claim_gpu_slot(num_gpus: int, runs_per_gpu: int = 1, lock_dir: str | None = None, *,
                   wait_s: float | None = None, poll_s: float = 1.0) -> tuple[int, int]:
    """Claim a free (gpu, slot) and hold it until this process exits.

    ``wait_s``: how long to wait when every slot is busy (None: until one frees
    up; 0: fail at once). Raises NoFreeGpuSlot when the wait runs out.
    """
    if num_gpus < 1:
        raise ValueError(f"num_gpus must be >= 1, got {num_gpus}")
    if runs_per_gpu < 1:
        raise ValueError(f"runs_per_gpu (config key runtime.runs_per_gpu) must be >= 1, got {runs_per_gpu}")
    lock_dir = lock_dir or os.environ.get(LOCK_DIR_ENV) or tempfile.gettempdir()
    os.makedirs(lock_dir, exist_ok=True)
    deadline = None if wait_s is None else time.monotonic() + wait_s
    told = False
    while True:
        claimed = try_claim_slot(num_gpus, runs_per_gpu, lock_dir)
        if claimed is not None:
            if told:
                print(f"autonorm: got GPU {claimed[0]} slot {claimed[1]}", file=sys.stderr, flush=True)
            return claimed
        busy = (f"all {num_gpus} GPU(s) x {runs_per_gpu} run(s) per GPU are busy "
                f"(lock files {lock_dir}/autonorm-gpu<G>-slot<K>.lock). Start at most "
                f"{num_gpus * runs_per_gpu} GPU jobs at once (snakemake --resources "
                f"gpu={num_gpus * runs_per_gpu}) or raise runtime.runs_per_gpu")
        if deadline is not None and time.monotonic() >= deadline:
            raise NoFreeGpuSlot(busy)
        if not told:
            print(f"autonorm: {busy}; waiting for a slot to free up", file=sys.stderr, flush=True)
            told = True
        time.sleep(poll_s if deadline is None else max(0.0, min(poll_s, deadline - time.monotonic())))


def resolve_device(name: str = "auto", runs_per_gpu: int | None = None) -> torch.device:
    """``runs_per_gpu``: None reads ``AUTONORM_RUNS_PER_GPU`` (default 1)."""
    import torch  # here, so the slot logic imports without torch (tests spawn claimers)

    global _claimed
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
        if os.environ.get("CUDA_VISIBLE_DEVICES"):
            return torch.device("cuda", 0)
        if _claimed is None:  # flock conflicts within one process too: claim once
            per_gpu = runs_per_gpu_from_env() if runs_per_gpu is None else runs_per_gpu
            _claimed = claim_gpu_slot(torch.cuda.device_count(), per_gpu)
            print(f"autonorm: GPU {_claimed[0]}, slot {_claimed[1]} of {per_gpu}", file=sys.stderr, flush=True)
        return torch.device("cuda", _claimed[0])
    return torch.device(name)


def set_deterministic(mode: bool, warn_only: bool = False, compiling: bool = False) -> None:
    """``torch.use_deterministic_algorithms`` without loading the compiler where nothing compiles.

    Why: torch's function also sets ``torch._inductor.config.deterministic``, and importing that
    loads the whole compiler stack (torch._dynamo, torch._inductor): 1.4 s of every training job
    on a 2-core box, a fifth of a smoke run. The aten kernels read only the flag set below; the
    compiler's own flag matters only to a process that compiles (``compiling``, or one that has
    loaded the compiler already), and there it is set too.
    """
    import torch

    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None or compiling or "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)
