"""Content verification of raw files, provenance records and the wording of errors.

Why: a training run on the wrong bytes is worse than no run.  Every loader
verifies what it reads against the registry (``CHECKSUMS``, ``IDX_MD5``,
``CONTENT_SHA256``) through a ``Checks`` object, which also records, per file,
what it was verified against; that list becomes ``meta["provenance"]``.  A
file that verifies against nothing is an error naming the file, the expected
checksum and where the file belongs, unless the user said
``allow_unverified``: then it is used and recorded as unverified.  Nothing
here ever substitutes other data.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import socket
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlparse

from . import registry
from .errors import DataCorruptError, DataMissingError

_HASH_CACHE: Dict[Tuple[str, int, int, str, bool], str] = {}

ALLOW_HINT = ("If you trust this file anyway, pass --allow-unverified to `autonorm-data` (or set "
              "`allow_unverified: true` in the dataset's `data` block of the config); the dataset is then "
              "marked unverified in meta.json and in the report.")


# ------------------------------------------------------------------ hashing
def _hash_stream(fh, algo: str, chunk: int = 1 << 20) -> str:
    h = hashlib.new(algo)
    for block in iter(lambda: fh.read(chunk), b""):
        h.update(block)
    return h.hexdigest()


def file_hash(path: os.PathLike, algo: str = "md5", decompressed: bool = False) -> str:
    """Hex digest of a file, or of its gunzipped bytes with ``decompressed``.

    Cached on (path, mtime, size): a process hashes each big file once.
    """
    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size, algo, decompressed)
    if key not in _HASH_CACHE:
        opener = gzip.open if decompressed else open
        with opener(p, "rb") as fh:
            _HASH_CACHE[key] = _hash_stream(fh, algo)
    return _HASH_CACHE[key]


def sha256_of(path: os.PathLike) -> str:
    return file_hash(path, "sha256")


def bytes_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rows_sha256(rows: Iterable[Tuple[str, int]]) -> str:
    """Canonical content hash of a sentence-classification table: "sentence\\tlabel\\n" per row, in order."""
    h = hashlib.sha256()
    for sentence, label in rows:
        h.update(f"{sentence}\t{int(label)}\n".encode("utf-8"))
    return h.hexdigest()


def manifest_sha256(named_digests: Iterable[Tuple[str, str]]) -> str:
    """Canonical hash of a set of files: "<name>\\n<sha256>\\n" per file, sorted by name."""
    h = hashlib.sha256()
    for name, digest in sorted(named_digests):
        h.update(f"{name}\n{digest}\n".encode("utf-8"))
    return h.hexdigest()


def table_sha256(values) -> str:
    """Canonical hash of a numeric table: each row "%.4f"-formatted, comma-joined, newline-ended."""
    h = hashlib.sha256()
    for row in values:
        h.update((",".join(f"{float(v):.4f}" for v in row) + "\n").encode("ascii"))
    return h.hexdigest()


# ------------------------------------------------------------------ messages
def expected_checksum(dataset: str, rel: str) -> Optional[Tuple[str, str]]:
    """(algo, hexdigest) published for ``R/<dataset>/<rel>``, or None if the source publishes none."""
    return registry.CHECKSUMS.get(dataset, {}).get(rel)


def _where(dataset: str, raw_dir: os.PathLike) -> str:
    layout = registry.RAW_LAYOUT.get(dataset, "")
    return (f"Raw folder for {dataset!r}: {Path(raw_dir).resolve() / dataset}. Expected layout: {layout} "
            f"Run `autonorm-data download --dataset {dataset} --raw-dir {raw_dir}` on a machine with "
            f"internet access, or copy the files from a local folder with "
            f"`autonorm-data download --dataset {dataset} --raw-dir {raw_dir} --from DIR`, "
            f"or place them there by hand (docs/data.md).")


def _fmt_expected(dataset: str, rel: str) -> str:
    exp = expected_checksum(dataset, rel)
    if exp:
        return f"expected {exp[0]} {exp[1]}"
    base = Path(rel).name
    idx = registry.IDX_MD5.get(dataset, {}).get(base[:-3] if base.endswith(".gz") else base)
    if idx:
        return f"expected md5 of the uncompressed bytes {idx}"
    return "verified by content: docs/data.md"


MissingItem = Union[str, Sequence[str]]


def missing_error(dataset: str, raw_dir: os.PathLike, rels: Union[MissingItem, List[MissingItem]],
                  note: str = "") -> DataMissingError:
    """Error for missing raw files; an item that is a tuple/list means "any one of these forms"."""
    if isinstance(rels, str):
        rels = [rels]
    base = Path(raw_dir) / dataset
    lines = [f"Dataset {dataset!r}: required raw file(s) missing:"]
    for r in rels:
        if isinstance(r, str):
            lines.append(f"  - {(base / r).resolve()} ({_fmt_expected(dataset, r)})")
        else:
            alts = " OR ".join(f"{(base / a).resolve()} ({_fmt_expected(dataset, a)})" for a in r)
            lines.append(f"  - one of: {alts}")
    if note:
        lines.append(note)
    lines.append(_where(dataset, raw_dir))
    return DataMissingError("\n".join(lines))


# ------------------------------------------------------------------ checks / provenance
class Checks:
    """Verification policy plus the provenance records of one dataset's raw files."""

    def __init__(self, dataset: str, raw_dir: os.PathLike, allow_unverified: bool = False):
        self.dataset = dataset
        self.raw_dir = Path(raw_dir)
        self.root = self.raw_dir / dataset
        self.allow_unverified = bool(allow_unverified)
        self.files: List[Dict[str, Any]] = []
        self.notes: List[str] = []

    def rel(self, path: os.PathLike) -> str:
        p = Path(path)
        try:
            return str(p.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(p)

    def record(self, path: os.PathLike, check: str, verified: bool, sha256: Optional[str] = None) -> None:
        p = Path(path)
        digest = sha256 if sha256 is not None else (sha256_of(p) if p.is_file() else "")
        rel = self.rel(p)
        self.files = [f for f in self.files if f["path"] != rel]
        self.files.append({"path": rel, "sha256": digest, "check": check, "verified": bool(verified)})

    def unverified(self, path: os.PathLike, problem: str, expected: str, sha256: Optional[str] = None) -> None:
        """A file that did not verify: an error, or (allow_unverified) an unverified record."""
        p = Path(path)
        if not self.allow_unverified:
            raise DataCorruptError(
                f"Dataset {self.dataset!r}: file {p.resolve()} cannot be verified: {problem}; {expected}. "
                f"Replace it by the official file at that path (or delete it and rerun `download`).\n"
                f"{ALLOW_HINT}\n" + _where(self.dataset, self.raw_dir))
        self.record(p, f"UNVERIFIED ({problem}; {expected}); accepted with allow_unverified", False, sha256)
        self.notes.append(f"{self.rel(p)}: {problem}")

    def provenance(self, note: str = "") -> Dict[str, Any]:
        status = "verified" if self.files and all(f["verified"] for f in self.files) else "unverified"
        parts = [note] if note else []
        if status == "unverified":
            parts.append("UNVERIFIED raw data (accepted with allow_unverified): " + "; ".join(self.notes)
                         if self.notes else "no raw file could be verified")
        return {"status": status, "files": list(self.files), "note": " ".join(parts).strip()}


def verify_file(dataset: str, raw_dir: os.PathLike, rel: str, checks: Optional[Checks] = None) -> Optional[str]:
    """Verify ``R/<dataset>/<rel>`` against its registered checksum.

    Returns the digest when it matches; with ``checks`` (allow_unverified) a
    mismatch is recorded as unverified and None is returned.  Raises
    DataMissingError / DataCorruptError with the full explanation otherwise.
    """
    path = Path(raw_dir) / dataset / rel
    if not path.is_file():
        raise missing_error(dataset, raw_dir, rel)
    exp = expected_checksum(dataset, rel)
    if exp is None:
        raise KeyError(f"no checksum registered for {dataset}/{rel}")
    algo, want = exp
    got = file_hash(path, algo)
    if got.lower() == want.lower():
        if checks is not None:
            checks.record(path, f"{algo} = published ({want})", True)
        return got
    if checks is not None and checks.allow_unverified:
        checks.unverified(path, f"{algo} is {got}", f"expected {algo} {want}")
        return None
    raise DataCorruptError(
        f"Dataset {dataset!r}: file {path.resolve()} is corrupt or not the official release: "
        f"{algo} is {got}, expected {algo} {want}. Delete it and place the official file at "
        f"that path.\n{ALLOW_HINT}\n" + _where(dataset, raw_dir))


# ------------------------------------------------------------------ network
def _proxy_host() -> Optional[Tuple[str, int]]:
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        val = os.environ.get(var)
        if val:
            u = urlparse(val if "://" in val else "http://" + val)
            if u.hostname:
                return u.hostname, u.port or 8080
    return None


def host_reachable(host: str, port: int = 443, timeout: float = 3.0) -> bool:
    """True if a TCP connection to ``host`` (or the configured proxy) opens within ``timeout`` seconds."""
    target = _proxy_host() or (host, port)
    try:
        with socket.create_connection(target, timeout=timeout):
            return True
    except OSError:
        return False


def require_network(dataset: str, raw_dir: os.PathLike, rels, timeout: float = 3.0) -> None:
    """Fail fast (seconds) with the missing-file error when none of the dataset's hosts is reachable.

    Why: library downloaders retry with back-off (Hugging Face takes ~40 s
    offline); an offline compute node should say at once what to place where.
    """
    hosts = registry.DOWNLOAD_HOSTS.get(dataset, [])
    if not hosts or any(host_reachable(h, timeout=timeout) for h in hosts):
        return
    raise missing_error(dataset, raw_dir, rels,
                        note=f"No network: {', '.join(hosts)} not reachable within {timeout:g} s, so nothing "
                             f"was downloaded.")


# ------------------------------------------------------------------ a processed dataset's identity
def data_identity(meta: Dict[str, Any], path: os.PathLike) -> str:
    """16 hex digits: sha256 of the dataset's name, resolved options and the sha256 of each split
    file (from meta.json's ``split_files``; a split it records none for, as in a hand-written
    meta.json, is hashed from its file). Loading a split verifies the file against that record."""
    recorded = meta.get("split_files") or {}
    splits = {}
    for p in sorted(Path(path).glob("*.pt")):
        name = p.stem
        rec = recorded.get(name)
        splits[name] = rec.get("sha256") if isinstance(rec, dict) and rec.get("sha256") else file_hash(p, "sha256")
    ident = {"name": meta.get("name"), "options": meta.get("options"), "splits": splits}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:16]
