"""Atomic file writes and small JSON helpers.

Why: Snakemake treats any existing output file as done.  A job killed while
writing would leave a truncated json/csv that later rules (and reruns) would
trust.  Every writer here goes to a temporary file in the same directory and
then ``os.replace``s it onto the target, which is atomic on POSIX, so a reader
sees either the old file or the complete new one, never a partial one.
"""
from __future__ import annotations

import json
import logging
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Union

PathLike = Union[str, os.PathLike]


class RunFolderBusy(RuntimeError):
    """Another process holds a run folder's lock (run.runlock)."""


class WriteFailed(OSError):
    """An output could not be written. The message names the file and the reason:
    the OS's own message for a full disk or read-only folder often names only a
    temp file, and torch's names no file at all."""

    def __init__(self, path: PathLike, reason: BaseException | str):
        if isinstance(reason, OSError) and reason.strerror:
            why = reason.strerror
        else:
            why = (str(reason).splitlines() or [""])[0] or type(reason).__name__
            if isinstance(reason, RuntimeError):
                why += " (is the disk full or the folder read-only?)"
        super().__init__(getattr(reason, "errno", None), f"cannot write {path}: {why}")
        self.path = str(path)

    def __str__(self) -> str:
        return self.strerror


class DamagedRunFile(RuntimeError):
    """A file of a run folder whose bytes differ from those recorded when it was written."""


def umask_mode(base: int = 0o666) -> int:
    """The mode a plain ``open()`` would give a new file under this process's umask (mkstemp
    makes 0600, which other users of a shared folder cannot read)."""
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def _atomic_write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` via a same-directory temp file + os.replace."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=str(path.parent))
    except OSError as e:
        raise WriteFailed(path, e) from e
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; give the file the mode a plain open() would
        # (or keep the mode of the file being replaced)
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = umask_mode()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and not isinstance(e, WriteFailed):
            raise WriteFailed(path, e) from e
        raise
    return path


def _json_default(obj: Any) -> Any:
    """Make numpy scalars/arrays and Paths serialisable (why: metrics are often numpy)."""
    if isinstance(obj, Path):
        return str(obj)
    # Only a loaded numpy can have made obj: importing it here would cost a torch-free job 0.1 s.
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _sanitize(obj: Any) -> Any:
    """Replace non-finite floats by None so the output is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_sanitize(v) for v in obj]
    return obj


def write_json_atomic(path: PathLike, obj: Any, indent: int = 2, sort_keys: bool = False) -> Path:
    """Serialise ``obj`` as JSON (NaN/inf -> null) and write it atomically."""
    # One round trip makes numpy values plain (via _json_default), so _sanitize sees every float.
    obj = json.loads(json.dumps(obj, default=_json_default))
    text = json.dumps(_sanitize(obj), indent=indent, sort_keys=sort_keys, default=_json_default,
                      allow_nan=False)
    return _atomic_write_bytes(path, (text + "\n").encode("utf-8"))


def read_json(path: PathLike) -> Any:
    """Read a JSON file (utf-8); a malformed file's error names the file."""
    with open(path, "r", encoding="utf-8") as fh:
        try:
            return json.load(fh)
        except json.JSONDecodeError as e:
            raise json.JSONDecodeError(f"{path} is not valid JSON: {e.msg}", e.doc, e.pos) from None


def read_table(folder: PathLike, name: str):
    """A CSV from a tables folder as a DataFrame; empty when missing or empty
    (figures and the report draw a 'no data' note instead of failing)."""
    import pandas as pd

    p = Path(folder) / name
    if not p.is_file() or p.stat().st_size == 0:
        return pd.DataFrame()
    try:
        return pd.read_csv(p)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def write_text_atomic(path: PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write text atomically."""
    return _atomic_write_bytes(path, text.encode(encoding))


def write_bytes_atomic(path: PathLike, data: bytes) -> Path:
    """Write bytes atomically."""
    return _atomic_write_bytes(path, data)


def write_csv_atomic(path: PathLike, df: Any, index: bool = False, **kwargs: Any) -> Path:
    """Write a pandas DataFrame as CSV atomically (float NaN written as empty)."""
    text = df.to_csv(index=index, **kwargs)
    return _atomic_write_bytes(path, text.encode("utf-8"))


def save_figure_atomic(fig: Any, path: PathLike, **kwargs: Any) -> Path:
    """Save a matplotlib figure atomically; format inferred from the suffix."""
    import io

    path = Path(path)
    buf = io.BytesIO()
    fmt = kwargs.pop("format", path.suffix.lstrip(".") or "png")
    fig.savefig(buf, format=fmt, **kwargs)
    return _atomic_write_bytes(path, buf.getvalue())


__all__ = [
    "WriteFailed",
    "write_json_atomic",
    "read_json",
    "read_table",
    "write_text_atomic",
    "write_bytes_atomic",
    "write_csv_atomic",
    "save_figure_atomic",
]


def require_folder(path: PathLike, made_by: str) -> Path:
    """``path`` as a Path; FileNotFoundError naming it and the step that makes it when it is not a
    folder (an entry point's input: a missing tables folder is not an empty result)."""
    p = Path(path)
    if not p.is_dir():
        import errno

        raise FileNotFoundError(errno.ENOENT, f"no such folder; it is made by {made_by}", str(p))
    return p


def sha256_file(path: PathLike) -> str:
    """The sha256 of a file, read in 1 MiB chunks (torch-free: the evaluate job's cache hit and the
    DAG build must not import torch, so not autonorm.data.integrity.file_hash)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_model_file(run_dir: str | Path) -> None:
    """Check ``model.pt`` against the sha256 that training recorded in ``model.json``; raise
    DamagedRunFile naming the file and what to rerun when they differ. A run folder written by
    an older version records no hash: that is said in a warning, and the file is read as is."""
    run_dir = Path(run_dir)
    path = run_dir / "model.pt"
    try:
        recorded = (json.loads((run_dir / "model.json").read_text()).get("sha256") or {}).get("model.pt")
    except (OSError, ValueError) as e:
        raise DamagedRunFile(f"{run_dir / 'model.json'} is missing or unreadable ({e}); it records the "
                             f"sha256 of {path}. Rerun the run's training (rule train: delete "
                             f"{run_dir / 'status.json'} and run snakemake again).") from e
    if recorded is None:
        logging.getLogger("autonorm.io_utils").warning(
            "%s records no sha256 of model.pt (written by an older version): its bytes cannot be "
            "checked", run_dir / "model.json")
        return
    actual = sha256_file(path) if path.exists() else "(missing)"
    if actual != recorded:
        raise DamagedRunFile(
            f"{path} is damaged: its sha256 is {actual}, training recorded {recorded} in "
            f"{run_dir / 'model.json'}. Its numbers would be wrong. Rerun the run's training (rule "
            f"train): delete {run_dir / 'status.json'} and run snakemake again.")
