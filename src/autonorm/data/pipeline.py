"""Dispatch of the three Snakemake-facing steps: download, preprocess, corruptions.

Why a thin layer: the CLI, the tests and the workflow call the same three
functions, and each dataset module only has to provide "load/verify raw" and
"build (meta, splits)".  ``preprocess`` reads and verifies everything *before*
it creates any output, and writes through ``atomic_output_dir``, so a failure
leaves the processed folder untouched.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Dict, Optional

from . import nlp, registry, smoke, tabular, vision
from .corruption_sets import build_corruption_set, find_official
from .integrity import missing_error
from .storage import write_processed
from ..io_utils import write_json_atomic

VISION_TV = ("mnist", "fashion_mnist", "cifar10", "cifar100", "svhn")


def _present(name: str, raw_dir, options: Dict[str, Any]) -> bool:
    if name in VISION_TV:
        return vision.raw_files_present(name, raw_dir)
    if name == "sst2":
        return nlp.sst2_present(raw_dir)
    if name == "ptb_pos":
        return nlp.ptb_present(raw_dir, options.get("ptb_source", "nltk_sample"))
    if name == "energy_efficiency":
        return tabular.energy_present(raw_dir)
    if name == "california_housing":
        return tabular.california_present(raw_dir)
    raise KeyError(name)


def _verify(name: str, raw_dir, options: Dict[str, Any]) -> None:
    """Full verification/parse of the raw files (same code as preprocess uses)."""
    if name in VISION_TV:
        vision.ensure_raw(name, raw_dir)
    elif name == "sst2":
        nlp.load_sst2_raw(raw_dir)
    elif name == "ptb_pos":
        nlp.load_ptb(raw_dir, options)
    elif name == "energy_efficiency":
        tabular.load_energy(raw_dir)
    elif name == "california_housing":
        tabular.load_california(raw_dir)


def download(name: str, raw_dir: os.PathLike, options: Optional[Dict[str, Any]] = None) -> Path:
    """Make sure R/<name> holds verified raw data; write the marker R/<name>/.complete.

    Files already present (e.g. placed by hand) are verified and used as they
    are; only missing ones are fetched.  Smoke datasets need nothing.
    """
    raw_dir = Path(raw_dir)
    marker = raw_dir / name / ".complete"
    if name == "cifar10c":
        found = find_official(raw_dir, allow_download=True)
        if "dir" not in found:
            raise missing_error("cifar10c", raw_dir, ["CIFAR-10-C.tar"], note=found["unavailable"] +
                                " (the `corruptions` step will generate the set locally instead)")
        write_json_atomic(marker, {"dataset": name, "how": found["how"], "time": time.time()})
        return marker
    spec = registry.get_spec(name)
    opts = registry.resolve_options(name, options)
    if spec.needs_download:
        if not _present(name, raw_dir, opts):
            if name in VISION_TV:
                vision.download(name, raw_dir)
            elif name == "sst2":
                nlp.download_sst2(raw_dir)
            elif name == "ptb_pos":
                if opts.get("ptb_source") == "wsj_full":
                    raise missing_error("ptb_pos", raw_dir, ["wsj/00/wsj_0001.mrg"],
                                        note="The full WSJ treebank (LDC99T42) is licensed and cannot be downloaded.")
                nlp.download_ptb(raw_dir)
            elif name == "energy_efficiency":
                tabular.download_energy(raw_dir)
            elif name == "california_housing":
                tabular.download_california(raw_dir)
        _verify(name, raw_dir, opts)
    write_json_atomic(marker, {"dataset": name, "standin": spec.standin, "needs_download": spec.needs_download,
                               "time": time.time()})
    return marker


def build(name: str, raw_dir: os.PathLike, options: Optional[Dict[str, Any]] = None):
    """(meta, splits) for a dataset, nothing written."""
    opts = registry.resolve_options(name, options)
    if name in VISION_TV:
        return vision.preprocess(name, raw_dir, opts)
    builders = {
        "sst2": lambda: nlp.preprocess_sst2(raw_dir, opts),
        "ptb_pos": lambda: nlp.preprocess_ptb(raw_dir, opts),
        "energy_efficiency": lambda: tabular.preprocess_energy(raw_dir, opts),
        "california_housing": lambda: tabular.preprocess_california(raw_dir, opts),
        "smoke_digits": lambda: smoke.preprocess_smoke_digits(opts),
        "smoke_shapes32": lambda: smoke.preprocess_smoke_shapes32(opts),
        "smoke_pos": lambda: smoke.preprocess_smoke_pos(opts),
        "smoke_sentiment": lambda: smoke.preprocess_smoke_sentiment(opts),
        "smoke_diabetes": lambda: tabular.preprocess_smoke_diabetes(opts),
    }
    if name not in builders:
        registry.get_spec(name)  # raises KeyError for unknown names
    return builders[name]()


def preprocess(name: str, raw_dir: os.PathLike, out: os.PathLike, options: Optional[Dict[str, Any]] = None
               ) -> Dict[str, Any]:
    """Build and atomically write ``out`` (meta.json + split .pt files); returns meta."""
    t0 = time.time()
    meta, splits = build(name, raw_dir, options)
    meta["preprocess_seconds"] = round(time.time() - t0, 3)
    write_processed(out, meta, splits)
    return meta


def corruptions(source: os.PathLike, raw_dir: os.PathLike, out: os.PathLike, seed: int = 0, **kw) -> Dict[str, Any]:
    return build_corruption_set(source, raw_dir, out, seed=seed, **kw)
