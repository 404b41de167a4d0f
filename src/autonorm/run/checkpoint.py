"""Checkpoint I/O for the trainer: atomic, rotated saves; a load that falls back
to the previous good checkpoint; and the RNG state that makes a resumed run end
with the same numbers as an uninterrupted one.

A run folder holds ``checkpoint.pt`` (the last epoch) and ``checkpoint.prev.pt``
(the epoch before). A save writes a temp file, records its sha256 in
``checkpoint.sha256.json`` (the last three saves), moves the current checkpoint to
``.prev`` and the temp file into place, each step an ``os.replace``; a kill at
any point leaves at least one complete checkpoint whose hash is recorded.

A checkpoint whose bytes are not those recorded (a flipped bit that torch.load would
not notice) or that torch cannot read is damaged: it is moved into ``damaged/`` with
a timestamp, kept for inspection, and the previous one is tried.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import time
from pathlib import Path

import torch

from ..io_utils import WriteFailed, sha256_file

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 1
CHECKPOINT = "checkpoint.pt"
PREVIOUS = "checkpoint.prev.pt"
HASHES = "checkpoint.sha256.json"  # sha256 of the last saves: a checkpoint must be one of them
DAMAGED_DIR = "damaged"  # damaged files of the run folder, kept for inspection, never deleted by a run
_KEEP_HASHES = 3
_REQUIRED = ("format", "config_hash", "epoch", "step", "train_time_s", "model", "optimizer", "history",
             "freeze", "rng")


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _write_temp(obj, path: Path) -> Path:
    """torch.save ``obj`` to a temp file beside ``path`` (flushed to disk); errors name ``path``."""
    tmp = _temp_path(path)
    try:
        with open(tmp, "wb") as fh:
            torch.save(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
    except (OSError, RuntimeError) as e:
        # torch reports a full disk as "[enforce fail at inline_container.cc] unexpected pos": no path
        tmp.unlink(missing_ok=True)
        raise WriteFailed(path, e) from e
    return tmp


def save_atomic(obj, path: Path) -> None:
    """torch.save ``obj`` to ``path`` atomically; a failure raises WriteFailed naming ``path``."""
    path = Path(path)
    tmp = _write_temp(obj, path)
    try:
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise WriteFailed(path, e) from e


def _recorded_hashes(run_dir: Path) -> list[str] | None:
    """The recorded checkpoint hashes, or None when the folder records none (an older run)."""
    try:
        got = json.loads((Path(run_dir) / HASHES).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return []  # an unreadable record vouches for nothing
    return [str(h) for h in got.get("sha256", [])] if isinstance(got, dict) else []


def _record_hash(run_dir: Path, digest: str) -> None:
    from ..io_utils import write_json_atomic

    known = [h for h in (_recorded_hashes(run_dir) or []) if h != digest]
    write_json_atomic(Path(run_dir) / HASHES, {"sha256": (known + [digest])[-_KEEP_HASHES:]})


def keep_damaged(path: Path, why: str) -> Path:
    """Move a damaged file of a run folder into ``<run>/damaged/`` (timestamped), for inspection."""
    path = Path(path)
    dest_dir = path.parent / DAMAGED_DIR
    dest_dir.mkdir(exist_ok=True)
    dest = dest_dir / f"{path.name}.{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.{os.getpid()}"
    os.replace(path, dest)
    log.warning("%s is damaged (%s): kept as %s for inspection", path, why, dest)
    return dest


def save_checkpoint(obj: dict, run_dir: Path) -> None:
    """Write ``checkpoint.pt``, keeping the one it replaces as ``checkpoint.prev.pt``."""
    path, prev = Path(run_dir) / CHECKPOINT, Path(run_dir) / PREVIOUS
    tmp = _write_temp(obj, path)
    try:
        _record_hash(run_dir, sha256_file(tmp))  # before the move: a kill leaves no unrecorded file
        if path.exists():
            os.replace(path, prev)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise WriteFailed(path, e) from e


def _read(path: Path, device: torch.device) -> dict:
    ckpt = torch.load(path, map_location=device, weights_only=True)
    missing = [k for k in _REQUIRED if not isinstance(ckpt, dict) or k not in ckpt]
    if missing:
        raise ValueError(f"not a training checkpoint (missing {', '.join(missing)})")
    return ckpt


def load_checkpoint(run_dir: Path, device: torch.device, config_hash: str,
                    data_identity: str | None = None) -> dict | None:
    """The newest intact checkpoint of this config and this data (``data_identity``:
    storage.ProcessedDataset.identity; None: not checked), or None (start fresh).

    A damaged ``checkpoint.pt`` (bytes other than recorded, or unreadable: truncated by a full
    disk, a crash without flush) is moved into ``damaged/`` with a warning naming it and
    ``checkpoint.prev.pt`` is tried next; a checkpoint of another config is ignored with a warning.
    """
    run_dir = Path(run_dir)
    recorded = _recorded_hashes(run_dir)
    for name in (CHECKPOINT, PREVIOUS):
        path = run_dir / name
        if not path.exists():
            continue
        fallback = "the previous checkpoint" if name == CHECKPOINT else "a fresh start"
        if recorded is not None and sha256_file(path) not in recorded:
            keep_damaged(path, f"its sha256 is not one recorded in {HASHES} when it was written; "
                               f"falling back to {fallback}")
            continue
        try:
            ckpt = _read(path, device)
        except Exception as e:  # noqa: BLE001 - torch.load raises many types for a damaged file
            reason = str(e).splitlines()[0] if str(e) else type(e).__name__
            keep_damaged(path, f"unreadable, {type(e).__name__}: {reason}; falling back to {fallback}")
            continue
        if ckpt["format"] != CHECKPOINT_FORMAT or ckpt["config_hash"] != config_hash:
            log.warning("ignoring checkpoint %s: it belongs to another config (hash %s, this run %s)",
                        path, ckpt.get("config_hash"), config_hash)
            return None
        if data_identity is not None and ckpt.get("data_identity") != data_identity:
            log.warning("ignoring checkpoint %s: it was trained on other data (data identity %s, the data "
                        "now %s: a data setting, the split or a raw file changed); training from scratch",
                        path, ckpt.get("data_identity"), data_identity)
            return None
        return ckpt
    return None


def clean_stale_temp_files(run_dir: Path) -> list[Path]:
    """Remove temp files (``.<name>.*.tmp``) left in a run folder by killed writers.

    Only called with the run folder's lock held: every writer of a run folder
    holds that lock, so any temp file found then belongs to a dead process.
    """
    removed = []
    for p in Path(run_dir).glob(".*.tmp"):
        if p.is_file():
            p.unlink(missing_ok=True)
            removed.append(p)
    if removed:
        log.warning("removed temp files left by an interrupted run: %s", ", ".join(p.name for p in removed))
    return removed


def rng_state(gen: torch.Generator, rng: random.Random) -> dict:
    version, state, gauss = rng.getstate()
    return {"torch": torch.get_rng_state(), "data": gen.get_state(), "data_device": gen.device.type,
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "py": [version, list(state), gauss]}


def _seed_from_state(state: torch.Tensor) -> int:
    """A seed derived from a generator state's bytes: the same state, the same seed."""
    return int.from_bytes(hashlib.sha256(state.contiguous().numpy().tobytes()).digest()[:8], "little") >> 1


def set_rng_state(s: dict, gen: torch.Generator, rng: random.Random) -> None:
    """Restore the RNG states of a checkpoint, wherever it was written.

    RNG states are CPU byte tensors (torch refuses others), so states a checkpoint load placed on a
    GPU are brought back first. The data generator's state is specific to its device type (a CUDA
    generator keeps a seed and an offset, a CPU one a Mersenne Twister): a checkpoint written on a
    GPU and resumed on a CPU (or back) cannot continue that stream, so the generator is seeded from
    the saved state instead, with a warning: the resumed run draws other batches and augmentations
    than an uninterrupted one would (across devices the floats differ anyway); on the same device
    type the stream continues exactly.
    """
    torch.set_rng_state(s["torch"].cpu())
    data = s["data"].cpu()
    saved_on = s.get("data_device", gen.device.type)  # older checkpoints: assume this device type
    try:
        if saved_on != gen.device.type:
            raise RuntimeError(f"written by a {saved_on} generator")
        gen.set_state(data)
    except RuntimeError as e:  # another device type's state (wrong size), or recorded as such
        gen.manual_seed(_seed_from_state(data))
        log.warning("the checkpoint's data-order generator state cannot continue on %s (%s): the generator "
                    "is seeded from it instead, so the resumed epochs draw other batches than an uninterrupted "
                    "run on one device would", gen.device.type, str(e).splitlines()[0] if str(e) else type(e).__name__)
    if s["cuda"] and torch.cuda.is_available():
        states = [t.cpu() for t in s["cuda"]][:torch.cuda.device_count()]
        for i, t in enumerate(states):
            torch.cuda.set_rng_state(t, i)
    version, state, gauss = s["py"]
    rng.setstate((version, tuple(state), gauss))
