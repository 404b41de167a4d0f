"""Vision datasets (MNIST, Fashion-MNIST, CIFAR-10/100, SVHN) through torchvision.

Why torchvision's own classes: they parse the official raw formats (IDX,
CIFAR pickles, SVHN .mat) exactly as the community does and carry the
published MD5s.  We call them with ``download=False`` on the raw folder after
our own verification, so a user-placed file is used as is and a corrupt one is
reported with the expected checksum instead of being silently re-downloaded.
The MD5s come from ``registry.CHECKSUMS`` (identical to torchvision's; a test
checks this) and are injected into a thin subclass, so the two checks can
never disagree.

Splits: the official train/test splits; validation is a seeded holdout of
the official train split (``val_fraction`` 0.1 by default, ``val_size`` 5000
for CIFAR-10/100).  The test split keeps the official order (CIFAR-10-C is
aligned with it).  ``test_rot90`` is the test split rotated 90 degrees
counter-clockwise.
"""
from __future__ import annotations

import gzip
import os
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

from ..io_utils import umask_mode
from . import registry
from .errors import DataCorruptError, DataError
from .integrity import Checks, file_hash, missing_error, require_network, verify_file
from .local_source import checksum_ok, idx_ok, pick, plan_files
from .source import DatasetSource
from .storage import holdout, subsample_train, val_count

TV_FOLDER = {"mnist": "MNIST", "fashion_mnist": "FashionMNIST"}
CIFAR_FOLDER = {"cifar10": "cifar-10-batches-py", "cifar100": "cifar-100-python"}
CIFAR_TAR = {"cifar10": "cifar-10-python.tar.gz", "cifar100": "cifar-100-python.tar.gz"}


def _tv_class(name: str):
    from torchvision import datasets as tvd
    return {"mnist": tvd.MNIST, "fashion_mnist": tvd.FashionMNIST, "cifar10": tvd.CIFAR10,
            "cifar100": tvd.CIFAR100, "svhn": tvd.SVHN}[name]


def _md5(name: str, rel: str) -> str:
    return registry.CHECKSUMS[name][rel][1]


def _verified_class(name: str):
    """torchvision class whose MD5 tables come from our registry (see module docstring)."""
    base = _tv_class(name)
    if name in CIFAR_FOLDER:
        folder = CIFAR_FOLDER[name]
        attrs = {
            "train_list": [[f, _md5(name, f"{folder}/{f}")] for f, _ in base.train_list],
            "test_list": [[f, _md5(name, f"{folder}/{f}")] for f, _ in base.test_list],
            "meta": dict(base.meta, md5=_md5(name, f"{folder}/{base.meta['filename']}")),
            "tgz_md5": _md5(name, CIFAR_TAR[name]),
        }
    elif name == "svhn":
        attrs = {"split_list": {k: [v[0], v[1], _md5(name, v[1])] if v[1] in registry.CHECKSUMS[name] else v
                                for k, v in base.split_list.items()}}
    else:
        attrs = {"resources": [(f, _md5(name, f"{TV_FOLDER[name]}/raw/{f}")) for f, _ in base.resources]}
    # same class name: MNIST derives its raw folder from ``self.__class__.__name__``
    return type(base.__name__, (base,), attrs)


def raw_files_present(name: str, raw_dir: os.PathLike) -> bool:
    """True when the raw files (in any accepted form) exist; used by ``download`` to skip the network."""
    root = Path(raw_dir) / name
    if name in TV_FOLDER:
        return all((root / r).is_file() or (root / r[:-3]).is_file() for r in registry.CHECKSUMS[name])
    if name in CIFAR_FOLDER:
        folder = [r for r in registry.CHECKSUMS[name] if r.startswith(CIFAR_FOLDER[name] + "/")]
        return all((root / r).is_file() for r in folder) or (root / CIFAR_TAR[name]).is_file()
    if name == "svhn":
        return all((root / r).is_file() for r in registry.CHECKSUMS[name])
    raise KeyError(name)


def _extract_gz(src: Path, dst: Path) -> None:
    fd, tmp = tempfile.mkstemp(prefix="." + dst.name, dir=str(dst.parent))
    try:
        with gzip.open(src, "rb") as fin, os.fdopen(fd, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        os.chmod(tmp, umask_mode())  # mkstemp makes 0600: others sharing the raw folder must read it
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _check_idx(name: str, raw_dir: os.PathLike, checks: Checks) -> None:
    """MNIST-style IDX files: verify the uncompressed bytes (.gz of any compressor, or plain), extract."""
    folder = Path(raw_dir) / name / TV_FOLDER[name] / "raw"
    missing = []
    for base, want in registry.IDX_MD5[name].items():
        plain, gz = folder / base, folder / (base + ".gz")
        if plain.is_file():  # what torchvision reads: verify exactly these bytes
            got = file_hash(plain, "md5")
            if got == want:
                checks.record(plain, f"md5 = published md5 of the uncompressed file ({want})", True)
            else:
                checks.unverified(plain, f"md5 is {got}", f"expected md5 {want} (uncompressed {base})")
        elif gz.is_file():
            try:
                got = file_hash(gz, "md5", decompressed=True)
            except (OSError, EOFError, zlib.error) as exc:
                raise DataCorruptError(f"Dataset {name!r}: {gz.resolve()} is not a readable gzip file "
                                       f"({type(exc).__name__}: {exc}). Replace it with the official "
                                       f"{base}.gz or the uncompressed {base}.\n"
                                       f"Expected layout: {registry.RAW_LAYOUT[name]}") from exc
            if got == want:
                official_gz = registry.CHECKSUMS[name][f"{TV_FOLDER[name]}/raw/{base}.gz"][1]
                same_gz = file_hash(gz, "md5") == official_gz
                checks.record(gz, f"md5 of decompressed bytes = published ({want})"
                              + ("; the .gz is the official archive too" if same_gz else
                                 "; recompressed .gz (container differs from the official archive)"), True)
            else:
                checks.unverified(gz, f"md5 of its decompressed bytes is {got}",
                                  f"expected md5 {want} (uncompressed {base})")
            _extract_gz(gz, plain)
        else:
            missing.append((f"{TV_FOLDER[name]}/raw/{base}.gz", f"{TV_FOLDER[name]}/raw/{base}"))
    if missing:
        raise missing_error(name, raw_dir, missing)


def ensure_raw(name: str, raw_dir: os.PathLike, checks: Optional[Checks] = None) -> Checks:
    """Verify the raw files of a vision dataset (extracting archives torchvision-style).

    Returns the ``Checks`` with one provenance record per file read.  Raises
    DataMissingError/DataCorruptError (unless ``checks.allow_unverified``).
    """
    checks = checks if checks is not None else Checks(name, raw_dir)
    root = Path(raw_dir) / name
    if name in TV_FOLDER:
        _check_idx(name, raw_dir, checks)
    elif name in CIFAR_FOLDER:
        folder = CIFAR_FOLDER[name]
        rels = [r for r in registry.CHECKSUMS[name] if r.startswith(folder + "/")]
        # CIFAR batches are Python pickles, which torchvision unpickles: an unverified one is never
        # loaded, whatever allow_unverified says (unpickling a file can run code).
        strict = Checks(name, raw_dir, allow_unverified=False)
        try:
            if not all((root / r).is_file() for r in rels):
                tar = CIFAR_TAR[name]
                if not (root / tar).is_file():
                    absent = [r.split("/", 1)[1] for r in rels if not (root / r).is_file()]
                    partial = (root / folder).is_dir() and len(absent) < len(rels)
                    raise missing_error(name, raw_dir, [(tar, folder + "/")],
                                        note=f"(the extracted folder lacks: {', '.join(absent)})" if partial else "")
                verify_file(name, raw_dir, tar, strict)
                from torchvision.datasets.utils import extract_archive
                extract_archive(str(root / tar), str(root))
            for r in rels:
                verify_file(name, raw_dir, r, strict)
        except DataCorruptError as exc:
            if checks.allow_unverified:
                raise DataCorruptError(f"{exc}\nallow_unverified does not apply here: {name}'s files are Python "
                                       "pickles, and an unverified pickle is never loaded (unpickling runs code)."
                                       ) from exc
            raise
        checks.files.extend(strict.files)
    elif name == "svhn":
        missing = [r for r in registry.CHECKSUMS[name] if not (root / r).is_file()]
        if missing:
            raise missing_error(name, raw_dir, missing)
        for r in registry.CHECKSUMS[name]:
            verify_file(name, raw_dir, r, checks)
    else:
        raise KeyError(name)
    return checks


def _missing_items(name: str, root: Path) -> list:
    """What to name as missing: CIFAR needs its archive *or* the extracted folder (one item, "one
    of"), the other sets each file they lack."""
    if name in CIFAR_FOLDER:
        return [(CIFAR_TAR[name], CIFAR_FOLDER[name] + "/")]
    return [r for r in registry.CHECKSUMS[name] if not (root / r).is_file()] or list(registry.CHECKSUMS[name])


def download(name: str, raw_dir: os.PathLike) -> None:
    """Fetch the official files with torchvision (network needed); then verify them."""
    root = Path(raw_dir) / name
    require_network(name, raw_dir, _missing_items(name, root))
    root.mkdir(parents=True, exist_ok=True)
    cls = _verified_class(name)
    try:
        if name == "svhn":
            for split in ("train", "test"):
                cls(str(root), split=split, download=True)
        else:
            for train in (True, False):
                cls(str(root), train=train, download=True)
    except Exception as exc:  # network errors come in many types (URLError, RuntimeError, OSError...)
        raise missing_error(name, raw_dir, _missing_items(name, root),
                            note=f"Download with torchvision failed: {type(exc).__name__}: {exc}") from exc


def load_raw(name: str, raw_dir: os.PathLike, allow_unverified: bool = False
             ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, List[str], Checks]:
    """Official (x_train, y_train, x_test, y_test, class_names, checks); x uint8 NCHW."""
    info = ensure_raw(name, raw_dir, Checks(name, raw_dir, allow_unverified))
    cls = _verified_class(name)
    root = str(Path(raw_dir) / name)
    try:
        if name == "svhn":
            tr, te = cls(root, split="train"), cls(root, split="test")
            xs = [np.asarray(d.data, dtype=np.uint8) for d in (tr, te)]  # already N,C,H,W
            ys = [np.asarray(d.labels, dtype=np.int64) for d in (tr, te)]  # torchvision maps 10 -> 0
            classes = [str(i) for i in range(10)]
        else:
            tr, te = cls(root, train=True), cls(root, train=False)
            if name in TV_FOLDER:
                xs = [d.data.numpy().astype(np.uint8)[:, None] for d in (tr, te)]
                ys = [d.targets.numpy().astype(np.int64) for d in (tr, te)]
            else:
                xs = [np.ascontiguousarray(np.asarray(d.data, dtype=np.uint8).transpose(0, 3, 1, 2)) for d in (tr, te)]
                ys = [np.asarray(d.targets, dtype=np.int64) for d in (tr, te)]
            classes = list(tr.classes)
    except DataError:
        raise
    except Exception as exc:
        raise DataCorruptError(f"Dataset {name!r}: torchvision could not read the raw files in {root}: "
                               f"{type(exc).__name__}: {exc}\nExpected layout: {registry.RAW_LAYOUT[name]}") from exc
    return xs[0], ys[0], xs[1], ys[1], classes, info


def channel_stats(x: np.ndarray, chunk: int = 4096) -> Tuple[List[float], List[float]]:
    """Per-channel mean/std on the 0..1 scale (chunked: CIFAR train as float64 would need 1 GB)."""
    c = x.shape[1]
    s = np.zeros(c)
    s2 = np.zeros(c)
    cnt = 0
    for i in range(0, x.shape[0], chunk):
        b = x[i:i + chunk].astype(np.float64) / 255.0
        s += b.sum(axis=(0, 2, 3))
        s2 += (b * b).sum(axis=(0, 2, 3))
        cnt += b.shape[0] * b.shape[2] * b.shape[3]
    mean = s / cnt
    std = np.sqrt(np.maximum(s2 / cnt - mean ** 2, 1e-12))
    return mean.tolist(), std.tolist()


def build_vision(name: str, splits: Dict[str, Tuple[np.ndarray, np.ndarray]], class_names: List[str],
                 options: Dict[str, Any], extra: Dict[str, Any] | None = None):
    """Meta + splits (incl. test_rot90) for an image-classification set from train/val/test arrays."""
    spec = registry.get_spec(name)
    xtr = splits["train"][0]
    mean, std = channel_stats(xtr)
    out = {k: (np.ascontiguousarray(v[0], dtype=np.uint8), np.asarray(v[1], dtype=np.int64)) for k, v in splits.items()}
    xt, yt = out["test"]
    out["test_rot90"] = (torch.rot90(torch.from_numpy(xt), 1, dims=(2, 3)).contiguous().numpy(), yt)
    meta = {
        "name": name, "task": spec.task, "family": spec.family, "standin": spec.standin,
        "description": spec.description,
        "sizes": {k: int(out[k][0].shape[0]) for k in ("train", "val", "test")},
        "split_seed": int(options.get("split_seed", 0)),
        "num_classes": len(class_names), "class_names": list(class_names),
        "image": {"channels": int(xtr.shape[1]), "height": int(xtr.shape[2]), "width": int(xtr.shape[3]),
                  "mean": mean, "std": std},
        "rotation": {"split": "test_rot90", "k": 1, "dims": [2, 3], "direction": "counter-clockwise"},
        "corruption_set": spec.corruption_set,
        "options": dict(options),
    }
    meta.update(extra or {})
    return meta, out


def preprocess(name: str, raw_dir: os.PathLike, options: Dict[str, Any]):
    """Official data -> (meta, splits) with the seeded validation holdout (and optional ``max_train``)."""
    x_tr, y_tr, x_te, y_te, classes, checks = load_raw(name, raw_dir, bool(options.get("allow_unverified", False)))
    seed = int(options.get("split_seed", 0))
    tr_idx, va_idx = holdout(len(y_tr), val_count(len(y_tr), options), seed)
    tr_idx, sub_note = subsample_train(tr_idx, options, seed)
    splits = {"train": (x_tr[tr_idx], y_tr[tr_idx]), "val": (x_tr[va_idx], y_tr[va_idx]), "test": (x_te, y_te)}
    note = "val = seeded holdout of the official train split; test = official test split" + sub_note
    return build_vision(name, splits, classes, options,
                        {"source": {"raw_dir": str(Path(raw_dir) / name), "files": [f["path"] for f in checks.files]},
                         "provenance": checks.provenance(f"official {name} files"),
                         "max_train": options.get("max_train"), "split_note": note})


# ------------------------------------------------------------------ --from plans and the sources
def plan_idx(name, ix, opts):
    """--from for MNIST / Fashion-MNIST: each IDX file, gzipped or not, chosen by its content."""
    folder = TV_FOLDER[name]
    plan, stale, missing = [], [], []
    for base in registry.IDX_MD5[name]:
        src = pick(name, base, ix.files.get(base + ".gz", []) + ix.files.get(base, []), idx_ok(name, base))
        if src is None:
            missing.append((f"{folder}/raw/{base}.gz", f"{folder}/raw/{base}"))
            continue
        plan.append((src, f"{folder}/raw/{src.name}"))
        # the other form would shadow (plain is read first) or be stale (an extraction of an old .gz)
        stale.append(f"{folder}/raw/{base}" if src.name.endswith(".gz") else f"{folder}/raw/{base}.gz")
    return plan, stale, missing


def plan_cifar(name, ix, opts):
    """--from for CIFAR-10 / CIFAR-100: the verified archive, else the extracted folder."""
    folder, tar = {"cifar10": ("cifar-10-batches-py", "cifar-10-python.tar.gz"),
                   "cifar100": ("cifar-100-python", "cifar-100-python.tar.gz")}[name]
    members = [r.split("/", 1)[1] for r in registry.CHECKSUMS[name] if r.startswith(folder + "/")]
    dirs = [d for d in ix.dirs.get(folder, []) if all((d / m).is_file() for m in members)]
    t = pick(name, tar, ix.files.get(tar, []), checksum_ok(name, tar))
    if t is not None and (not dirs or checksum_ok(name, tar)(t)):
        return [(t, tar)], [folder], []
    d = pick(name, folder, dirs, None)
    if d is not None:
        return [(d, folder)], [tar], []
    return [], [], [(tar, folder + "/")]


def _torchvision_source(name: str, plan_from, hints, not_hints=()):
    if plan_from is None:  # SVHN: two .mat files
        plan_from = plan_files({"train_32x32.mat": "train_32x32.mat", "test_32x32.mat": "test_32x32.mat"}, name)
    return DatasetSource(
        build=lambda raw, opts: preprocess(name, raw, opts),
        present=lambda raw, opts: raw_files_present(name, raw),
        verify=lambda raw, opts: ensure_raw(name, raw, Checks(name, raw, bool(opts.get("allow_unverified", False)))),
        fetch=lambda raw, opts: download(name, raw),
        plan_from=plan_from, hints=hints, not_hints=not_hints)


MNIST = _torchvision_source("mnist", plan_idx, ("mnist",), not_hints=("fashion",))
FASHION_MNIST = _torchvision_source("fashion_mnist", plan_idx, ("fashion",))
CIFAR10 = _torchvision_source("cifar10", plan_cifar, ("cifar-10", "cifar10"))
CIFAR100 = _torchvision_source("cifar100", plan_cifar, ("cifar-100", "cifar100"))
SVHN = _torchvision_source("svhn", None, ("svhn",))
