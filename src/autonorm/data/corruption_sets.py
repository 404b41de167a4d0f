"""Build a corruption set folder (CIFAR-10-C layout) for a processed vision dataset.

Order of preference for ``cifar10c`` (why: the official release is what the
paper evaluated on; a locally generated set is only an approximation):

1. the official files a user placed in ``R/cifar10c/CIFAR-10-C/`` (15
   ``<corruption>.npy`` + ``labels.npy``; shapes checked; Zenodo publishes an
   MD5 only for the tar, so these are marked unverified in meta);
2. the official archive ``R/cifar10c/CIFAR-10-C.tar`` (MD5 verified, extracted);
3. a download of that archive from Zenodo record 2535967 (MD5 verified);
4. otherwise, generated locally from the processed CIFAR-10 *test* split with
   ``corruptions.py`` (CIFAR severities, seeded); meta says ``generated: true``
   and explains why and how (including the frost substitute).

A user-placed tar that fails its checksum is an error, never a reason to
generate.  The choice is made again every time the set is built, never
frozen by the download marker: ``planned_source`` tells the workflow which
source a build would use now ("official" once the release is placed or
Zenodo is reachable), so a run after an offline one rebuilds the set from
the official release.  The set's meta says which was used
(``used``: official | generated; ``generated``: bool).  ``smoke_shapes32_c`` is always generated (on the first
``max_images`` test images, default 200, to keep the smoke DAG fast).

Output layout (identical to the official one): ``<corruption>.npy`` uint8
[5*N, H, W, C] with severity s in rows (s-1)*N .. s*N-1, ``labels.npy`` int64
[5*N], ``meta.json``.
"""
from __future__ import annotations

import os
import shutil
import sys
import tarfile
import time
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Dict, Optional

import numpy as np

from . import registry
from .errors import DataCorruptError
from .integrity import host_reachable, verify_file
from .local_source import Index, pick
from .registry import CORRUPTIONS
from .source import DatasetSource
from ..io_utils import write_json_atomic

# .corruptions (scipy) and .storage (torch) are imported by the functions that build a set: the
# workflow calls planned_source while Snakemake builds the DAG, where they would cost seconds.

OFFICIAL_N = 10000


def _official_dir(raw_dir) -> Path:
    return Path(raw_dir) / "cifar10c" / "CIFAR-10-C"


def _official_complete(d: Path) -> bool:
    return all((d / f"{c}.npy").is_file() for c in CORRUPTIONS) and (d / "labels.npy").is_file()


def _check_official_arrays(d: Path) -> None:
    labels = np.load(d / "labels.npy", mmap_mode="r")
    if labels.shape != (5 * OFFICIAL_N,):
        raise DataCorruptError(f"CIFAR-10-C: {d / 'labels.npy'} has shape {labels.shape}, expected (50000,). "
                               f"{registry.RAW_LAYOUT['cifar10c']}")
    for c in CORRUPTIONS:
        a = np.load(d / f"{c}.npy", mmap_mode="r")
        if a.shape != (5 * OFFICIAL_N, 32, 32, 3) or a.dtype != np.uint8:
            raise DataCorruptError(f"CIFAR-10-C: {d / (c + '.npy')} has shape {a.shape} dtype {a.dtype}, "
                                   f"expected (50000, 32, 32, 3) uint8. {registry.RAW_LAYOUT['cifar10c']}")


def _extract_tar(tar: Path, dest: Path) -> None:
    with tarfile.open(tar) as tf:
        members = [m for m in tf.getmembers() if m.name.startswith("CIFAR-10-C/") and ".." not in m.name
                   and (m.isfile() or m.isdir())]
        tf.extractall(dest, members=members)


def _try_download(raw_dir) -> str:
    """Download CIFAR-10-C.tar (2.9 GB) with MD5 check; returns '' on success or the reason of failure."""
    root = Path(raw_dir) / "cifar10c"
    root.mkdir(parents=True, exist_ok=True)
    url = registry.URLS["cifar10c"]["CIFAR-10-C.tar"]
    part = root / "CIFAR-10-C.tar.part"
    hosts = registry.DOWNLOAD_HOSTS["cifar10c"]
    if not any(host_reachable(h) for h in hosts):
        return f"no network: {', '.join(hosts)} not reachable"
    try:
        with urllib.request.urlopen(url, timeout=30) as r, open(part, "wb") as fh:
            shutil.copyfileobj(r, fh, 1 << 22)
        os.replace(part, root / "CIFAR-10-C.tar")
        verify_file("cifar10c", raw_dir, "CIFAR-10-C.tar")
        return ""
    except Exception as exc:
        if part.exists():
            part.unlink()
        return f"{type(exc).__name__}: {exc}"


def _plan_from(name: str, ix: Index, opts) -> tuple:
    """Which files of a --from folder are the official set: the archive, else the extracted folder."""
    t = pick(name, "CIFAR-10-C.tar", ix.files.get("CIFAR-10-C.tar", []), None)
    if t is not None:
        return [(t, "CIFAR-10-C.tar")], ["CIFAR-10-C"], []
    dirs = [d for d in ix.dirs.get("CIFAR-10-C", []) if (d / "labels.npy").is_file()]
    d = pick(name, "CIFAR-10-C/", dirs, None)
    if d is not None:
        return [(d, "CIFAR-10-C")], ["CIFAR-10-C.tar"], []
    return [], [], [("CIFAR-10-C.tar", "CIFAR-10-C/labels.npy")]


#: the official release's raw files (registry.CORRUPTION_SETS["cifar10c"]["files"]): how --from
#: finds them; find_official verifies, extracts or downloads them
OFFICIAL_FILES = DatasetSource(plan_from=_plan_from, hints=("cifar-10-c", "cifar10c"))


def find_official(raw_dir, allow_download: bool = True) -> Dict[str, Any]:
    """Locate (and if needed extract/download) the official CIFAR-10-C; {} plus reason when unavailable."""
    d = _official_dir(raw_dir)
    tar = Path(raw_dir) / "cifar10c" / "CIFAR-10-C.tar"
    if _official_complete(d):
        _check_official_arrays(d)
        return {"dir": d, "verified": False, "how": "user-placed extracted files (Zenodo publishes no per-file checksum)"}
    if tar.is_file():
        verify_file("cifar10c", raw_dir, "CIFAR-10-C.tar")  # raises on a corrupt user-placed tar
        _extract_tar(tar, d.parent)
        _check_official_arrays(d)
        return {"dir": d, "verified": True, "how": "CIFAR-10-C.tar (md5 verified)"}
    if allow_download:
        why = _try_download(raw_dir)
        if not why:
            _extract_tar(tar, d.parent)
            _check_official_arrays(d)
            return {"dir": d, "verified": True, "how": "downloaded from Zenodo 2535967 (md5 verified)"}
        return {"unavailable": f"official CIFAR-10-C not in {d.parent} and download failed ({why})"}
    return {"unavailable": f"official CIFAR-10-C not in {d.parent} and downloading was disabled"}


def planned_source(corruption_set: str, raw_dir, check_network: bool = True) -> str:
    """'official' or 'generated': what building ``corruption_set`` would use now (cheap, no download).

    For the workflow: used as a rule parameter, a change (official release
    placed, or Zenodo reachable after an offline run) makes Snakemake rebuild
    the set instead of keeping a generated one.
    """
    if not registry.CORRUPTION_SETS.get(corruption_set, {}).get("official"):
        return "generated"
    d = _official_dir(raw_dir)
    if _official_complete(d) or (d.parent / "CIFAR-10-C.tar").is_file():
        return "official"
    if check_network and any(host_reachable(h, timeout=2.0) for h in registry.DOWNLOAD_HOSTS["cifar10c"]):
        return "official"
    return "generated"


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _corrupt_all_severities(args):
    from .corruptions import corrupt

    x, name, seed, path = args
    n = x.shape[0]
    out = np.empty((5 * n,) + x.shape[1:], dtype=np.uint8)
    t = time.time()
    for s in range(1, 6):
        out[(s - 1) * n:s * n] = corrupt(x, name, s, seed=seed)
    np.save(path, out)
    return name, time.time() - t


def generate(images_nhwc: np.ndarray, labels: np.ndarray, out_tmp: Path, seed: int, workers: int = 1) -> Dict[str, float]:
    """Write the 15 corruption arrays + labels into ``out_tmp``; returns seconds per corruption."""
    jobs = [(images_nhwc, c, seed, out_tmp / f"{c}.npy") for c in CORRUPTIONS]
    times: Dict[str, float] = {}
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            for name, dt in ex.map(_corrupt_all_severities, jobs):
                times[name] = round(dt, 3)
    else:
        for j in jobs:
            name, dt = _corrupt_all_severities(j)
            times[name] = round(dt, 3)
    np.save(out_tmp / "labels.npy", np.tile(np.asarray(labels, dtype=np.int64), 5))
    return times


def build_corruption_set(source: os.PathLike, raw_dir: os.PathLike, out: os.PathLike, seed: int = 0,
                         max_images: Optional[int] = None, allow_download: bool = True,
                         force_generate: bool = False, workers: int = 1) -> Dict[str, Any]:
    """Create ``out`` (atomically) for the processed vision dataset at ``source``; returns its meta."""
    from .corruptions import FROST_NOTE
    from .storage import atomic_output_dir, load_processed

    ds = load_processed(source)
    name = ds.meta["name"]
    cset = next((k for k, v in registry.CORRUPTION_SETS.items() if v["source"] == name), f"{name}_c")
    cfg = registry.CORRUPTION_SETS.get(cset, {"official": False, "max_images": None})
    if max_images is None:
        max_images = cfg.get("max_images")
    reason = "no official release exists for this dataset"
    if cfg.get("official") and not force_generate:
        found = find_official(raw_dir, allow_download)
        if "dir" in found:
            d = found["dir"]
            _, y_test = ds.split("test")
            labels = np.load(d / "labels.npy")
            aligned = bool(np.array_equal(labels[:OFFICIAL_N].astype(np.int64), y_test.numpy()[:OFFICIAL_N])) \
                if len(y_test) >= OFFICIAL_N else False
            meta = {"name": cset, "generated": False, "used": "official",
                    "source": f"official CIFAR-10-C (Hendrycks & Dietterich 2019, Zenodo 2535967): {found['how']}",
                    "corruptions": list(CORRUPTIONS), "severities": 5, "n_per_severity": OFFICIAL_N,
                    "labels_match_source_test": aligned, "source_dataset": name, "standin": False,
                    "note": "official release"}
            with atomic_output_dir(out) as tmp:
                for c in CORRUPTIONS + ["labels"]:
                    _link_or_copy(d / f"{c}.npy", tmp / f"{c}.npy")
                write_json_atomic(tmp / "meta.json", meta)
            return meta
        reason = found["unavailable"]
        print(f"[autonorm-data] {reason}; generating {cset} locally", file=sys.stderr)
    if ds.meta.get("task") != "image_classification" or ds.meta["image"]["channels"] != 3:
        raise ValueError(f"corruptions need an RGB image dataset, {name} is not")
    x, y = ds.split("test")
    x = x.numpy().transpose(0, 2, 3, 1)
    y = y.numpy()
    if max_images is not None and max_images < len(y):
        x, y = x[:max_images], y[:max_images]
    x = np.ascontiguousarray(x)
    with atomic_output_dir(out) as tmp:
        t0 = time.time()
        times = generate(x, y, tmp, seed, workers)
        meta = {"name": cset, "generated": True, "used": "generated",
                "source": f"generated locally from the test split of {name} ({Path(source)}) with "
                          "autonorm.data.corruptions (CIFAR-specific severities of Hendrycks' make_cifar_c.py)",
                "corruptions": list(CORRUPTIONS), "severities": 5, "n_per_severity": int(len(y)),
                "seed": int(seed), "source_dataset": name, "standin": True,
                "why_generated": reason,
                "note": ("GENERATED, not the official CIFAR-10-C release: numbers are not directly comparable "
                         "with published CIFAR-10-C results. " + FROST_NOTE + "; motion blur re-implements "
                         "ImageMagick's kernel; test images are the first n_per_severity of the test split."),
                "seconds_per_corruption": times, "seconds_total": round(time.time() - t0, 2)}
        write_json_atomic(tmp / "meta.json", meta)
    return meta
