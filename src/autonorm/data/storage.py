"""On-disk form of processed datasets and the in-memory loader.

Why this shape: every split is small enough to live in memory (the largest,
CIFAR train, is 138 MB as uint8), so one ``torch.save({"x", "y"})`` per split
plus a ``meta.json`` is the simplest thing that is fast to load and trivially
inspectable.  Training then indexes whole tensors on the device instead of
running per-sample Python (a DataLoader with workers is the bottleneck for
models this small).

Writes are atomic at the directory level: everything is written to a hidden
temporary sibling directory, which is renamed onto ``out`` only when complete,
so a failed or killed job never leaves a half-written processed folder that
Snakemake would trust.

Integrity: ``meta.json`` records the SHA-256, size, shape and dtype of every
split file (``split_files``) and the trivial baseline (``trivial_baseline``,
see baselines.py).  ``ProcessedDataset.split`` verifies the file against that
record (hashed once per process) and checks shapes, dtypes and label ranges
before anything trains on it, so flipped bytes or a truncated file give an
error naming the file and the fix instead of a silent wrong number.  The
format is documented in docs/data.md.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

import numpy as np
import torch

from ..io_utils import read_json, write_json_atomic
from .errors import DataCorruptError, DataOptionError
from .integrity import data_identity, file_hash

SPLITS = ("train", "val", "test", "test_rot90")


# ---------------------------------------------------------------- writing
@contextlib.contextmanager
def atomic_output_dir(out: os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory that replaces ``out`` on success and vanishes on failure."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=str(out.parent)))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; the final folder should look like any other
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=str(out.parent)))
        os.rmdir(old)
        os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, out)


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def write_processed(out: os.PathLike, meta: Dict[str, Any], splits: Dict[str, Tuple[Any, Any]]) -> Path:
    """Write ``splits`` ({name: (x, y)} numpy or torch) and ``meta`` atomically into ``out``.

    Adds to ``meta`` (in place): ``trivial_baseline`` (fit on train, scored on
    test, unless the builder set one) and ``split_files`` (sha256, bytes,
    shapes and dtypes of each split file, verified on load).
    """
    tensors = {}
    for name, (x, y) in splits.items():
        x = torch.from_numpy(np.array(x, copy=True, order="C")) if isinstance(x, np.ndarray) else x.contiguous()
        y = torch.from_numpy(np.array(y, copy=True, order="C")) if isinstance(y, np.ndarray) else y.contiguous()
        tensors[name] = (x, y)
    if "trivial_baseline" not in meta and meta.get("task") and {"train", "test"} <= set(tensors):
        from .baselines import trivial_baseline
        meta["trivial_baseline"] = trivial_baseline(meta["task"], tensors["train"], tensors["test"], meta)
    files: Dict[str, Any] = {}
    with atomic_output_dir(out) as tmp:
        for name, (x, y) in tensors.items():
            buf = io.BytesIO()
            torch.save({"x": x, "y": y}, buf)
            data = buf.getvalue()
            (tmp / f"{name}.pt").write_bytes(data)
            files[name] = {"file": f"{name}.pt", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                           "x": {"shape": list(x.shape), "dtype": _dtype_name(x)},
                           "y": {"shape": list(y.shape), "dtype": _dtype_name(y)}}
        meta["split_files"] = files
        write_json_atomic(tmp / "meta.json", meta)
    return Path(out)


# ---------------------------------------------------------------- splitting
def holdout(n: int, n_val: int, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """Seeded split of range(n) into (train, val) index arrays, each kept in original order."""
    if not 0 < n_val < n:
        raise ValueError(f"validation size {n_val} must be in 1..{n - 1}")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def split_note(tr, va, te, what: str = "seeded") -> str:
    """'seeded 65/15/20 split (1,167 / 270 / 360)': the proportions of the split as built (from its
    index arrays), so a description can never disagree with the data."""
    n = [len(tr), len(va), len(te)]
    total = max(sum(n), 1)
    pct = "/".join(f"{round(100 * k / total)}" for k in n)
    return f"{what} {pct} split ({' / '.join(f'{k:,}' for k in n)} train / val / test)"


def three_way(n: int, val_fraction: float, test_fraction: float, seed: int
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded train/val/test split of range(n) (for sources without an official split)."""
    n_test = max(1, int(round(n * test_fraction)))
    n_val = max(1, int(round(n * val_fraction)))
    if n_test + n_val >= n:
        raise ValueError(f"split fractions leave no training data (n={n})")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_test + n_val:]), np.sort(perm[n_test:n_test + n_val]), np.sort(perm[:n_test])


def subsample_train(train_idx: np.ndarray, options: Dict[str, Any], seed: int) -> Tuple[np.ndarray, str]:
    """Seeded subset of ``max_train`` training indices (data option for CPU-sized studies), plus a split note.

    Drawn *after* the validation holdout, so val/test are those of the full setting.
    """
    m = options.get("max_train")
    if m is None:
        return train_idx, ""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise DataOptionError(f"data option max_train must be a positive integer, got {m!r}")
    n = len(train_idx)
    if m >= n:
        return train_idx, f"; max_train={m} >= {n}: the whole remaining train split is kept"
    pick = np.random.default_rng([int(seed), 7121]).choice(n, int(m), replace=False)
    return np.sort(train_idx[pick]), (f"; train = seeded subset (max_train) of {m} of the {n} examples "
                                      "left after the validation holdout")


def val_count(n_train: int, options: Dict[str, Any]) -> int:
    """Validation size: explicit ``val_size`` wins over ``val_fraction``."""
    fraction = float(options.get("val_fraction", 0.1))
    if options.get("val_size") is not None:
        return int(options["val_size"])
    return max(1, int(round(n_train * fraction)))


# ---------------------------------------------------------------- loading
_WARNED_UNRECORDED: set = set()

_X_DTYPES = {"image_classification": (torch.uint8, 4), "sequence_classification": (torch.int64, 2),
             "token_classification": (torch.int64, 2), "regression": (torch.float32, 2)}


def check_split_tensors(meta: Dict[str, Any], split: str, x: torch.Tensor, y: torch.Tensor) -> str:
    """'' if (x, y) fit the dataset's meta (shapes, dtypes, label ranges), else what is wrong."""
    task = meta.get("task")
    n = int(x.shape[0]) if x.dim() else -1
    if y.dim() == 0 or int(y.shape[0]) != n:
        return f"x has {n} rows but y has shape {tuple(y.shape)}"
    want_n = (meta.get("sizes") or {}).get("test" if split == "test_rot90" else split)
    if want_n is not None and n != int(want_n):
        return f"{n} examples, meta.json sizes[{split!r}] = {want_n}"
    rec = (meta.get("split_files") or {}).get(split)
    if rec:
        for k, t in (("x", x), ("y", y)):
            if not isinstance(rec.get(k), dict) or not {"shape", "dtype"} <= set(rec[k]):
                return f"meta.json's record of this split has no shape and dtype of {k!r}"
            if list(t.shape) != list(rec[k]["shape"]) or _dtype_name(t) != rec[k]["dtype"]:
                return (f"{k} is {_dtype_name(t)} {list(t.shape)}, meta.json records "
                        f"{rec[k]['dtype']} {rec[k]['shape']}")
    if task not in _X_DTYPES:
        return ""
    xdt, xdim = _X_DTYPES[task]
    if x.dtype != xdt or x.dim() != xdim:
        return f"x is {_dtype_name(x)} with {x.dim()} dims, expected {_dtype_name(torch.empty(0, dtype=xdt))} with {xdim}"
    if task == "image_classification" and meta.get("image"):
        im = meta["image"]
        c, h, w = int(im["channels"]), int(im["height"]), int(im["width"])
        want = (c, w, h) if split == "test_rot90" else (c, h, w)
        if tuple(x.shape[1:]) != want:
            return f"images have shape {tuple(x.shape[1:])}, expected {want}"
    if task in ("sequence_classification", "token_classification") and meta.get("vocab_size") and n:
        lo, hi = int(x.min()), int(x.max())
        if lo < 0 or hi >= int(meta["vocab_size"]):
            return f"token ids span {lo}..{hi}, outside the vocabulary 0..{int(meta['vocab_size']) - 1}"
    if task == "regression":
        if meta.get("num_features") is not None and x.shape[1] != int(meta["num_features"]):
            return f"{x.shape[1]} features, meta.json num_features = {meta['num_features']}"
        if not y.is_floating_point() or y.dim() != 1:
            return f"regression targets must be a 1-D float tensor, got {_dtype_name(y)} {list(y.shape)}"
        if n and not bool(torch.isfinite(y).all()):
            return "non-finite regression targets (NaN or inf)"
        return ""
    if y.dtype != torch.int64:
        return f"labels are {_dtype_name(y)}, expected int64"
    if task == "token_classification":
        if tuple(y.shape) != tuple(x.shape):
            return f"tags have shape {tuple(y.shape)}, tokens {tuple(x.shape)}"
        k = meta.get("num_tags")
        bad = (y != -100) & ((y < 0) | (y >= int(k))) if k is not None else (y < -100)
        if bool(bad.any()):
            return f"tag ids outside 0..{int(k) - 1} (or -100 for padding): e.g. {int(y[bad][0])}"
        return ""
    k = meta.get("num_classes")
    if y.dim() != 1:
        return f"labels have shape {list(y.shape)}, expected 1-D"
    if k is not None and n and (int(y.min()) < 0 or int(y.max()) >= int(k)):
        return f"labels span {int(y.min())}..{int(y.max())}, outside 0..{int(k) - 1}"
    return ""


def default_device() -> torch.device:
    """The GPU when there is one (whole splits are moved there), else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ProcessedDataset:
    """A processed dataset folder; splits are loaded lazily and cached per device.

    ``split(name, device)`` returns the whole split as two tensors; batches are
    made by indexing them (``batches``), so the training loop has no per-sample
    Python and no worker processes.
    """

    def __init__(self, path: os.PathLike):
        self.path = Path(path)
        meta_path = self.path / "meta.json"
        if not meta_path.is_file():
            raise FileNotFoundError(f"{meta_path} not found: run `autonorm-data preprocess` first")
        self.meta: Dict[str, Any] = read_json(meta_path)
        self._cache: Dict[Tuple[str, str], Tuple[torch.Tensor, torch.Tensor]] = {}
        self._identity: Optional[str] = None

    # convenience accessors
    name = property(lambda self: self.meta["name"])
    task = property(lambda self: self.meta["task"])
    family = property(lambda self: self.meta["family"])
    standin = property(lambda self: bool(self.meta.get("standin", False)))

    @property
    def identity(self) -> str:
        """What this processed dataset *is*, for a run's identity (docs/method.md "A run's
        identity"): a hash of its resolved settings (``meta["options"]``) and the sha256 of every
        split file. Any data setting or raw file that changes a split changes it, so a checkpoint,
        a trained model or an evaluation of other data is never taken for this one's."""
        if self._identity is None:
            self._identity = data_identity(self.meta, self.path)
        return self._identity

    def available_splits(self):
        return [s for s in SPLITS if (self.path / f"{s}.pt").is_file()]

    def split(self, name: str, device: Any = "cpu") -> Tuple[torch.Tensor, torch.Tensor]:
        """Whole split as (x, y) on ``device``; verified against meta.json on first load."""
        dev = torch.device(device)
        key = (name, str(dev))
        if key not in self._cache:
            p = self.path / f"{name}.pt"
            if not p.is_file():
                raise FileNotFoundError(f"split {name!r} not found in {self.path} (have {self.available_splits()})")
            x, y = self._load_verified(name, p)
            self._cache[key] = (x.to(dev), y.to(dev))
        return self._cache[key]

    # ---- integrity (see module docstring)
    def _corrupt(self, p: Path, problem: str) -> DataCorruptError:
        return DataCorruptError(
            f"Processed file {p.resolve()} is corrupt: {problem}. Fix: rerun preprocess for dataset "
            f"{self.meta.get('name')!r}: delete {self.path.resolve()} and rerun the workflow (Snakemake "
            f"reruns preprocess), or `snakemake --forcerun preprocess <targets>`, or "
            f"`autonorm-data preprocess --dataset {self.meta.get('name')} --raw-dir <raw> --out {self.path}`.")

    def _load_verified(self, name: str, p: Path) -> Tuple[torch.Tensor, torch.Tensor]:
        rec = (self.meta.get("split_files") or {}).get(name)
        if rec is None:
            if str(self.path) not in _WARNED_UNRECORDED:
                _WARNED_UNRECORDED.add(str(self.path))
                warnings.warn(f"{self.path / 'meta.json'} records no checksums of its split files (written by an "
                              "older version or by hand): shapes and labels are checked, bytes are not. "
                              "Rerun preprocess to record them.", stacklevel=3)
        else:
            size = p.stat().st_size
            if size != int(rec.get("bytes", size)):
                raise self._corrupt(p, f"size is {size} bytes, meta.json records {rec['bytes']} (truncated or replaced)")
            got = file_hash(p, "sha256")
            if got != rec.get("sha256"):
                raise self._corrupt(p, f"sha256 is {got}, meta.json records {rec.get('sha256')}")
        try:
            obj = torch.load(p, weights_only=True, map_location="cpu")
        except Exception as exc:  # truncated zip, garbage bytes, unpickling refused...
            raise self._corrupt(p, f"torch.load failed ({type(exc).__name__}: {exc})") from exc
        if not (isinstance(obj, dict) and isinstance(obj.get("x"), torch.Tensor)
                and isinstance(obj.get("y"), torch.Tensor)):
            raise self._corrupt(p, "expected a dict with tensors 'x' and 'y'")
        x, y = obj["x"], obj["y"]
        problem = check_split_tensors(self.meta, name, x, y)
        if problem:
            raise self._corrupt(p, problem)
        return x, y

    def batches(self, split: str, batch_size: int, *, shuffle: bool = False,
                generator: Optional[torch.Generator] = None, device: Any = "cpu",
                drop_last: bool = False) -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
        """Yield (x, y) mini-batches by indexing the in-memory split (permutation if ``shuffle``)."""
        x, y = self.split(split, device)
        n = x.shape[0]
        if shuffle:
            gen_dev = generator.device if generator is not None else x.device
            order = torch.randperm(n, generator=generator, device=gen_dev).to(x.device)
        else:
            order = torch.arange(n, device=x.device)
        stop = n - (n % batch_size) if drop_last else n
        for i in range(0, stop, batch_size):
            idx = order[i:i + batch_size]
            yield x.index_select(0, idx), y.index_select(0, idx)

    def __repr__(self) -> str:
        return f"ProcessedDataset({str(self.path)!r}, task={self.meta.get('task')!r}, sizes={self.meta.get('sizes')})"


def load_processed(path: os.PathLike) -> ProcessedDataset:
    """Open ``<results>/data/<dataset>/`` (format: docs/data.md)."""
    return ProcessedDataset(path)


def load_corruptions(path: os.PathLike):
    """Open a corruption-set folder: ``(meta, {corruption: uint8 NHWC memmap}, labels)``.

    Arrays are memory-mapped: the official CIFAR-10-C is 2.3 GB and evaluation
    only needs one severity slice at a time.
    """
    path = Path(path)
    meta = read_json(path / "meta.json")
    arrays = {c: np.load(path / f"{c}.npy", mmap_mode="r") for c in meta["corruptions"]}
    labels = np.load(path / "labels.npy")
    return meta, arrays, labels
