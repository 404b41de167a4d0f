"""Evaluation in the process that trained the run (CPU), reused by ``autonorm-evaluate``.

An evaluate job starts a fresh Python and torch (about 2.5 s on a laptop CPU, most of a smoke
job) to evaluate a model that its training job held in memory a moment earlier. So a training
job on CPU also runs the evaluation, exactly as ``autonorm-evaluate`` would (same function, model
loaded from the saved ``model.pt``, same batch size and thread count), and stores the result in
``<run>/eval_precomputed.json`` with a key of everything the result depends on:

* sha256 of the run's ``config.json``, ``metrics.json``, ``model.json`` and ``model.pt``;
* sha256 of the processed dataset's ``meta.json`` and of the test splits evaluation reads;
* sha256 of every file of the corruption set evaluation reads (``meta.json``, ``labels.npy`` and
  one ``.npy`` per corruption), or none;
* the evaluation arguments: batch size, severity, device (cpu), threads;
* a fingerprint of this package's source files and the torch version, taken when the process
  starts (an edit of the source during a run changes the files on disk, not the code running:
  nothing is stored then).

``autonorm-evaluate`` recomputes the key from the files and its own arguments, without importing
torch, and writes the stored result only when every part matches; otherwise (another batch size,
a GPU that "auto" could pick, a retrained model, edited code, another or no corruption set,
``--recompute``)
it evaluates from scratch. The evaluation DAG is unchanged: the evaluate job still runs, still
checks the run folder, and still writes the same JSON, byte for byte
(tests/test_eval_cache.py compares both ways).

The workflow's corruption set is built by its own job, which the training job does not wait for.
A training job uses the set only when it is already there (``corruption_set_beside``), hashes its
files before and after evaluating, and stores nothing if they changed in between; when the set
came later, the key lacks it and the evaluate job evaluates from scratch.
"""

from __future__ import annotations

import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path

from ..io_utils import read_json, sha256_file, write_json_atomic

PRECOMPUTED = "eval_precomputed.json"
FORMAT = 2  # 2: the corruption set is keyed by its files' contents, not its path
RUN_FILES = ("config.json", "metrics.json", "model.json", "model.pt")
EVAL_SPLIT_FILES = ("test.pt", "test_rot90.pt")
_CODE_FINGERPRINT: str | None = None


#: the source tree whose files the code fingerprint covers (this package)
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # src/autonorm, not this folder


def _with_torch(digest: str) -> str:
    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = "?"
    return hashlib.sha256(f"{digest} torch {torch_version}".encode()).hexdigest()


def fingerprint_on_disk() -> str:
    """A digest of this package's .py files (path and bytes) as they are on disk now, and the
    installed torch version."""
    from ..fingerprint import package_digest

    return _with_torch(package_digest(PACKAGE_ROOT))


def pin_code_fingerprint() -> str:
    """The fingerprint of the code this process runs: the package's source as it was when the
    package was first imported (autonorm.CODE_AT_IMPORT), so an edit of the source after that,
    before or while an entry point runs, is seen by :func:`store`."""
    global _CODE_FINGERPRINT
    import autonorm

    _CODE_FINGERPRINT = _with_torch(autonorm.CODE_AT_IMPORT)
    return _CODE_FINGERPRINT


def code_fingerprint() -> str:
    """The fingerprint of the code this process runs: pinned at its start
    (:func:`pin_code_fingerprint`), else taken at the first call. A stored result from other code
    is never reused."""
    return _CODE_FINGERPRINT if _CODE_FINGERPRINT is not None else pin_code_fingerprint()


def eval_key(run_dir, data_dir, corruptions, device: str, batch_size: int, severity: int, threads: int) -> dict:
    run_dir, data_dir = Path(run_dir), Path(data_dir)
    return {
        "format": FORMAT,
        "run_files": {name: sha256_file(run_dir / name) for name in RUN_FILES},
        "data_meta": sha256_file(data_dir / "meta.json"),
        # the splits evaluation reads, hashed here too: a hand-written meta.json may record no checksums
        "data_files": {p.name: sha256_file(p) for p in (data_dir / f for f in EVAL_SPLIT_FILES) if p.exists()},
        "corruptions": corruption_files(corruptions) if corruptions else None,
        "device": device,
        "batch_size": int(batch_size),
        "severity": int(severity),
        "threads": int(threads),
        "code": code_fingerprint(),
    }


def corruption_files(corr_dir) -> dict:
    """sha256 of each file of a corruption set that evaluation reads (storage.load_corruptions)."""
    corr_dir = Path(corr_dir)
    names = ["meta.json", "labels.npy"] + [f"{c}.npy" for c in read_json(corr_dir / "meta.json")["corruptions"]]
    return {name: sha256_file(corr_dir / name) for name in names}


def corruption_set_beside(data_dir) -> Path | None:
    """The corruption set already built from this processed dataset in the workflow's layout
    (``<results>/corruptions/<set>/`` beside ``<results>/data/<dataset>/``, see
    workflow/rules/common.smk): the one folder there whose meta.json names this dataset as its
    source. None when there is none, or more than one."""
    data_dir = Path(data_dir)
    try:
        name = read_json(data_dir / "meta.json").get("name")
        # a folder whose name starts with "." is one being written (data.storage.atomic_output_dir)
        found = [p.parent for p in sorted((data_dir.parent.parent / "corruptions").glob("*/meta.json"))
                 if not p.parent.name.startswith(".") and read_json(p).get("source_dataset") == name]
    except (OSError, ValueError):
        return None
    return found[0] if len(found) == 1 else None


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
        if ((stored.get("key") or {}).get("corruptions") is None) != (corruptions is None):
            # decided without hashing a corruption set (the official one is 2.3 GB)
            return None, f"{PRECOMPUTED} was computed for other inputs (differs in: corruptions)"
        key = eval_key(run_dir, data_dir, corruptions, "cpu", batch_size, severity, threads)
    except (OSError, ValueError) as e:
        return None, f"{path} or a file of its key is unreadable ({e})"
    if stored.get("key") != key:
        diff = sorted(k for k in key if (stored.get("key") or {}).get(k) != key[k])
        return None, f"{PRECOMPUTED} was computed for other inputs (differs in: {', '.join(diff) or 'format'})"
    return stored["result"], "key matches"


def store(key: dict, run_dir, data_dir, corruptions, result: dict) -> Path | None:
    """Store ``result``, computed from the inputs ``key`` (taken before evaluating) describes. The
    key is taken again first: when any input changed meanwhile, nothing is stored (None)."""
    now = eval_key(run_dir, data_dir, corruptions, key["device"], key["batch_size"], key["severity"], key["threads"])
    if now != key:
        return None
    if fingerprint_on_disk() != key["code"]:
        # the source changed while this process ran: its result is from code that no longer exists
        return None
    path = Path(run_dir) / PRECOMPUTED
    write_json_atomic(path, {"key": key, "result": result})
    return path
