"""Evaluation in the process that trained the run (CPU), reused by ``autonorm-evaluate``.

An evaluate job starts a fresh Python and torch (about 2.5 s on a laptop CPU, most of a smoke
job) to evaluate a model that its training job held in memory a moment earlier. So a training
job on CPU also runs the evaluation, exactly as ``autonorm-evaluate`` would (same function, model
loaded from the saved ``model.pt``, same batch size and thread count), and stores the result in
``<run>/eval_precomputed.json`` with a key of everything the result depends on:

* sha256 of the run's ``config.json``, ``metrics.json``, ``model.json`` and ``model.pt``;
* sha256 of the processed dataset's ``meta.json`` and of the test splits evaluation reads;
* the evaluation arguments: corruption set (none), batch size, severity, device (cpu), threads;
* a fingerprint of this package's source files and the torch version.

``autonorm-evaluate`` recomputes the key from the files and its own arguments, without importing
torch, and writes the stored result only when every part matches; otherwise (another batch size,
a GPU that "auto" could pick, a retrained model, edited code, a corruption set, ``--recompute``)
it evaluates from scratch. The evaluation DAG is unchanged: the evaluate job still runs, still
checks the run folder, and still writes the same JSON, byte for byte
(tests/test_eval_cache.py compares both ways).
"""

from __future__ import annotations

import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path

from .io_utils import read_json, write_json_atomic

PRECOMPUTED = "eval_precomputed.json"
FORMAT = 1
RUN_FILES = ("config.json", "metrics.json", "model.json", "model.pt")
EVAL_SPLIT_FILES = ("test.pt", "test_rot90.pt")
_CODE_FINGERPRINT: str | None = None


def sha256_file(path: str | os.PathLike) -> str:
    # Not autonorm.data.integrity.file_hash: importing autonorm.data imports torch, which the
    # evaluate job's hit path exists to avoid.
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def code_fingerprint() -> str:
    """sha256 over this package's .py files (path and bytes) and the installed torch version:
    a stored result from other code is never reused."""
    global _CODE_FINGERPRINT
    if _CODE_FINGERPRINT is None:
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for p in sorted(root.rglob("*.py")):
            h.update(str(p.relative_to(root)).encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
        try:
            h.update(("torch " + metadata.version("torch")).encode())
        except metadata.PackageNotFoundError:
            h.update(b"torch ?")
        _CODE_FINGERPRINT = h.hexdigest()
    return _CODE_FINGERPRINT


def eval_key(run_dir, data_dir, corruptions, device: str, batch_size: int, severity: int, threads: int) -> dict:
    run_dir, data_dir = Path(run_dir), Path(data_dir)
    return {
        "format": FORMAT,
        "run_files": {name: sha256_file(run_dir / name) for name in RUN_FILES},
        "data_meta": sha256_file(data_dir / "meta.json"),
        # the splits evaluation reads, hashed here too: a hand-written meta.json may record no checksums
        "data_files": {p.name: sha256_file(p) for p in (data_dir / f for f in EVAL_SPLIT_FILES) if p.exists()},
        "corruptions": str(corruptions) if corruptions else None,
        "device": device,
        "batch_size": int(batch_size),
        "severity": int(severity),
        "threads": int(threads),
        "code": code_fingerprint(),
    }


def accelerator_may_be_visible() -> bool:
    """True unless this is a Linux host without NVIDIA, AMD or WSL GPU device nodes: where
    ``--device auto`` might pick an accelerator, only a fresh evaluation is trusted."""
    if not sys.platform.startswith("linux"):
        return True  # macOS: "auto" may pick MPS
    if os.environ.get("CUDA_VISIBLE_DEVICES") in ("", "-1"):
        return False
    return any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg"))


def lookup(run_dir, data_dir, corruptions, device: str, batch_size: int, severity: int,
           threads: int | None) -> tuple[dict | None, str]:
    """(stored result, why) when the stored evaluation is exactly what this call would compute;
    (None, why not) otherwise."""
    path = Path(run_dir) / PRECOMPUTED
    if not path.exists():
        return None, f"no {PRECOMPUTED}"
    if threads is None:
        return None, "no --threads given (the thread count is part of the key)"
    if device == "auto" and accelerator_may_be_visible():
        return None, "--device auto and an accelerator may be visible"
    if device not in ("auto", "cpu"):
        return None, f"--device {device}"
    try:
        stored = read_json(path)
        key = eval_key(run_dir, data_dir, corruptions, "cpu", batch_size, severity, threads)
    except (OSError, ValueError) as e:
        return None, f"{path} or a file of its key is unreadable ({e})"
    if stored.get("key") != key:
        diff = sorted(k for k in key if (stored.get("key") or {}).get(k) != key[k])
        return None, f"{PRECOMPUTED} was computed for other inputs (differs in: {', '.join(diff) or 'format'})"
    return stored["result"], "key matches"


def store(run_dir, data_dir, batch_size: int, severity: int, threads: int, result: dict) -> Path:
    key = eval_key(run_dir, data_dir, None, "cpu", batch_size, severity, threads)
    path = Path(run_dir) / PRECOMPUTED
    write_json_atomic(path, {"key": key, "result": result})
    return path
