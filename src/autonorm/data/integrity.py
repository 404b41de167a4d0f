"""Checksum verification and the wording of "missing / corrupt" errors.

Why: a training run on the wrong bytes is worse than no run.  Every loader
asks ``require_file`` for its raw inputs; it verifies the published checksum
(if there is one) and otherwise raises an error that names the file, the
expected checksum and the raw-folder layout, so the user knows what to fetch
and where to put it.  Nothing here ever substitutes other data.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Dict, Optional, Tuple

from . import registry
from .errors import DataCorruptError, DataMissingError

_HASH_CACHE: Dict[Tuple[str, float, int, str], str] = {}


def file_hash(path: os.PathLike, algo: str = "md5", chunk: int = 1 << 20) -> str:
    """Hex digest of a file (cached on path+mtime+size: big archives are hashed once per process)."""
    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime, st.st_size, algo)
    if key in _HASH_CACHE:
        return _HASH_CACHE[key]
    h = hashlib.new(algo)
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    _HASH_CACHE[key] = h.hexdigest()
    return _HASH_CACHE[key]


def expected_checksum(dataset: str, rel: str) -> Optional[Tuple[str, str]]:
    """(algo, hexdigest) published for ``R/<dataset>/<rel>``, or None if the source publishes none."""
    return registry.CHECKSUMS.get(dataset, {}).get(rel)


def _where(dataset: str, raw_dir: os.PathLike) -> str:
    layout = registry.RAW_LAYOUT.get(dataset, "")
    return (f"Raw folder for {dataset!r}: {Path(raw_dir).resolve() / dataset}. Expected layout: {layout} "
            f"Run `autonorm-data download --dataset {dataset} --raw-dir {raw_dir}` on a machine with "
            f"internet access, or place the official files there by hand.")


def _fmt_expected(dataset: str, rel: str) -> str:
    exp = expected_checksum(dataset, rel)
    return f"expected {exp[0]} {exp[1]}" if exp else "no checksum is published for this file"


def missing_error(dataset: str, raw_dir: os.PathLike, rels, note: str = "") -> DataMissingError:
    """Build the error for one or several missing raw files."""
    if isinstance(rels, str):
        rels = [rels]
    base = Path(raw_dir) / dataset
    lines = [f"Dataset {dataset!r}: required raw file(s) missing:"]
    for r in rels:
        lines.append(f"  - {(base / r).resolve()} ({_fmt_expected(dataset, r)})")
    if note:
        lines.append(note)
    lines.append(_where(dataset, raw_dir))
    return DataMissingError("\n".join(lines))


def verify_file(dataset: str, raw_dir: os.PathLike, rel: str) -> Optional[str]:
    """Verify ``R/<dataset>/<rel>`` against the published checksum.

    Returns the verified digest, or None when no checksum is published.
    Raises DataMissingError / DataCorruptError with the full explanation.
    """
    path = Path(raw_dir) / dataset / rel
    if not path.is_file():
        raise missing_error(dataset, raw_dir, rel)
    exp = expected_checksum(dataset, rel)
    if exp is None:
        return None
    algo, want = exp
    got = file_hash(path, algo)
    if got.lower() != want.lower():
        raise DataCorruptError(
            f"Dataset {dataset!r}: file {path.resolve()} is corrupt or not the official release: "
            f"{algo} is {got}, expected {algo} {want}. Delete it and place the official file at "
            f"that path.\n" + _where(dataset, raw_dir))
    return got


def sha256_of(path: os.PathLike) -> str:
    """SHA-256 of a file, recorded in meta.json for provenance when no checksum is published."""
    return file_hash(path, "sha256")
