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
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

import numpy as np
import torch

from ..io_utils import read_json, write_json_atomic

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


def write_processed(out: os.PathLike, meta: Dict[str, Any], splits: Dict[str, Tuple[Any, Any]]) -> Path:
    """Write ``splits`` ({name: (x, y)} numpy or torch) and ``meta`` atomically into ``out``."""
    with atomic_output_dir(out) as tmp:
        for name, (x, y) in splits.items():
            x = torch.from_numpy(np.array(x, copy=True, order="C")) if isinstance(x, np.ndarray) else x.contiguous()
            y = torch.from_numpy(np.array(y, copy=True, order="C")) if isinstance(y, np.ndarray) else y.contiguous()
            torch.save({"x": x, "y": y}, tmp / f"{name}.pt")
        write_json_atomic(tmp / "meta.json", meta)
    return Path(out)


# ---------------------------------------------------------------- splitting
def holdout(n: int, n_val: int, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """Seeded split of range(n) into (train, val) index arrays, each kept in original order."""
    if not 0 < n_val < n:
        raise ValueError(f"validation size {n_val} must be in 1..{n - 1}")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def three_way(n: int, val_fraction: float, test_fraction: float, seed: int
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded train/val/test split of range(n) (for sources without an official split)."""
    n_test = max(1, int(round(n * test_fraction)))
    n_val = max(1, int(round(n * val_fraction)))
    if n_test + n_val >= n:
        raise ValueError(f"split fractions leave no training data (n={n})")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_test + n_val:]), np.sort(perm[n_test:n_test + n_val]), np.sort(perm[:n_test])


def val_count(n_train: int, options: Dict[str, Any]) -> int:
    """Validation size: explicit ``val_size`` wins over ``val_fraction``."""
    if options.get("val_size") is not None:
        return int(options["val_size"])
    return max(1, int(round(n_train * float(options.get("val_fraction", 0.1)))))


# ---------------------------------------------------------------- loading
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

    # convenience accessors
    name = property(lambda self: self.meta["name"])
    task = property(lambda self: self.meta["task"])
    family = property(lambda self: self.meta["family"])
    standin = property(lambda self: bool(self.meta.get("standin", False)))

    def available_splits(self):
        return [s for s in SPLITS if (self.path / f"{s}.pt").is_file()]

    def split(self, name: str, device: Any = "cpu") -> Tuple[torch.Tensor, torch.Tensor]:
        dev = torch.device(device)
        key = (name, str(dev))
        if key not in self._cache:
            p = self.path / f"{name}.pt"
            if not p.is_file():
                raise FileNotFoundError(f"split {name!r} not found in {self.path} (have {self.available_splits()})")
            obj = torch.load(p, weights_only=True, map_location="cpu")
            self._cache[key] = (obj["x"].to(dev), obj["y"].to(dev))
        return self._cache[key]

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
    """Open ``<results>/data/<dataset>/`` (see contracts.md for the format)."""
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
