"""Dispatch of the three Snakemake-facing steps: download, preprocess, corruptions.

Why a thin layer: the CLI, the tests and the workflow call the same three
functions, and each dataset module only has to provide "load/verify raw" and
"build (meta, splits)".  ``preprocess`` reads and verifies everything *before*
it creates any output, and writes through ``atomic_output_dir``, so a failure
leaves the processed folder untouched.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import local_source, registry
from .corruption_sets import build_corruption_set, find_official
from .errors import DataError
from .storage import write_processed
from .tabular import bundled_provenance
from ..io_utils import write_json_atomic


def download(name: str, raw_dir: os.PathLike, options: Optional[Dict[str, Any]] = None,
             from_dir: Optional[os.PathLike] = None, allow_unverified: bool = False) -> Path:
    """Make sure R/<name> holds verified raw data; write the marker R/<name>/.complete.

    ``from_dir``: copy the accepted files from that local folder (any sub-layout)
    instead of downloading.  Otherwise files already present (placed by hand)
    are verified and used as they are; only missing ones are fetched.  Smoke
    datasets need nothing.  ``allow_unverified`` (or the dataset option of the
    same name) accepts files that do not verify, recorded as unverified.
    """
    raw_dir = Path(raw_dir)
    marker = raw_dir / name / ".complete"
    # the marker vouches for the files as this call finds them: gone until they verify again
    marker.unlink(missing_ok=True)
    opts = registry.resolve_options(name, options) if name in registry.DATASETS else dict(options or {})
    if allow_unverified:
        opts["allow_unverified"] = True
    copied: List[str] = []
    if from_dir is not None:
        copied = local_source.place_from(name, raw_dir, from_dir, opts)
    if registry.CORRUPTION_SETS.get(name, {}).get("official"):
        return _download_official_corruptions(name, raw_dir, marker, copied)
    spec = registry.get_spec(name)
    prov: Dict[str, Any] = {}
    if spec.needs_download:
        source = registry.source_of(name)
        if not source.present(raw_dir, opts):
            source.fetch(raw_dir, opts)
        try:
            prov = source.verify(raw_dir, opts).provenance()
        except DataError:
            local_source.remove_copies(name, raw_dir, copied)  # R/<name> never keeps a copy that failed
            # an earlier marker says "verified" of files that no longer are: it must not outlive them
            marker.unlink(missing_ok=True)
            raise
    write_json_atomic(marker, {"dataset": name, "standin": spec.standin, "needs_download": spec.needs_download,
                               "from": str(Path(from_dir).resolve()) if from_dir is not None else None,
                               "copied": copied, "provenance": prov, "time": time.time()})
    return marker


def _download_official_corruptions(name: str, raw_dir: Path, marker: Path, copied: List[str]) -> Path:
    """Official CIFAR-10-C if present/downloadable (a corrupt tar is an error), else a 'generate' marker.

    The marker only records this attempt: ``make_corruptions`` decides again
    from the raw folder, and ``corruption_sets.planned_source`` lets the
    workflow rerun both when the official set becomes available.
    """
    found = find_official(raw_dir, allow_download=True)
    if "dir" in found:
        info = {"dataset": name, "decision": "official", "how": found["how"], "verified": found["verified"]}
    else:
        info = {"dataset": name, "decision": "generate", "why": found["unavailable"]}
        print(f"[autonorm-data] {name}: {found['unavailable']}; the corruptions step will generate the set "
              f"locally (rerun download when the official release is reachable or placed in "
              f"{raw_dir / name})", file=sys.stderr)
    write_json_atomic(marker, {**info, "copied": copied, "time": time.time()})
    return marker


def build(name: str, raw_dir: os.PathLike, options: Optional[Dict[str, Any]] = None):
    """(meta, splits) for a dataset, nothing written."""
    opts = registry.resolve_options(name, options)  # raises KeyError for unknown names
    return registry.source_of(name).build(raw_dir, opts)


class OptionReads(dict):
    """The options dict a builder gets, recording which keys it looked up (``read``): how a test
    checks that a dataset's declared ``data_keys`` are exactly the options its builder reads."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.read: set = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def options_read(name: str, raw_dir: os.PathLike, options: Optional[Dict[str, Any]] = None) -> set:
    """The option keys the dataset's builder reads when built with ``options`` (nothing written)."""
    opts = OptionReads(registry.resolve_options(name, options))
    registry.source_of(name).build(raw_dir, opts)
    return opts.read


def preprocess(name: str, raw_dir: os.PathLike, out: os.PathLike, options: Optional[Dict[str, Any]] = None
               ) -> Dict[str, Any]:
    """Build and atomically write ``out`` (meta.json + split .pt files); returns meta.

    meta gets ``provenance`` (raw files and what they were verified against),
    ``trivial_baseline`` and ``split_files`` (checksums verified on load).
    """
    t0 = time.time()
    meta, splits = build(name, raw_dir, options)
    bundled = registry.source_of(name).bundled
    if "provenance" not in meta and bundled is not None:
        meta["provenance"] = bundled_provenance(*bundled)
    meta["preprocess_seconds"] = round(time.time() - t0, 3)
    write_processed(out, meta, splits)
    return meta


def corruptions(source: os.PathLike, raw_dir: os.PathLike, out: os.PathLike, seed: int = 0, **kw) -> Dict[str, Any]:
    return build_corruption_set(source, raw_dir, out, seed=seed, **kw)
