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

from . import local_source, nlp, registry, smoke, tabular, vision
from .corruption_sets import build_corruption_set, find_official
from .errors import DataError
from .integrity import Checks, missing_error
from .storage import write_processed
from .tabular import bundled_provenance
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


def _verify(name: str, raw_dir, options: Dict[str, Any]) -> Dict[str, Any]:
    """Full verification/parse of the raw files (same code as preprocess uses); returns the provenance."""
    allow = bool(options.get("allow_unverified", False))
    if name in VISION_TV:
        checks = vision.ensure_raw(name, raw_dir, Checks(name, raw_dir, allow))
    elif name == "sst2":
        checks = nlp.load_sst2_raw(raw_dir, allow)[1]["checks"]
    elif name == "ptb_pos":
        checks = nlp.load_ptb(raw_dir, options)[1]["checks"]
    elif name == "energy_efficiency":
        checks = tabular.load_energy(raw_dir, allow)[1]["checks"]
    elif name == "california_housing":
        checks = tabular.load_california(raw_dir, allow)[2]["checks"]
    else:
        raise KeyError(name)
    return checks.provenance()


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
    if name == "cifar10c":
        return _download_cifar10c(raw_dir, marker, copied)
    spec = registry.get_spec(name)
    prov: Dict[str, Any] = {}
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
        try:
            prov = _verify(name, raw_dir, opts)
        except DataError:
            local_source.remove_copies(name, raw_dir, copied)  # R/<name> never keeps a copy that failed
            # an earlier marker says "verified" of files that no longer are: it must not outlive them
            marker.unlink(missing_ok=True)
            raise
    write_json_atomic(marker, {"dataset": name, "standin": spec.standin, "needs_download": spec.needs_download,
                               "from": str(Path(from_dir).resolve()) if from_dir is not None else None,
                               "copied": copied, "provenance": prov, "time": time.time()})
    return marker


def _download_cifar10c(raw_dir: Path, marker: Path, copied: List[str]) -> Path:
    """Official CIFAR-10-C if present/downloadable (a corrupt tar is an error), else a 'generate' marker.

    The marker only records this attempt: ``make_corruptions`` decides again
    from the raw folder, and ``corruption_sets.planned_source`` lets the
    workflow rerun both when the official set becomes available.
    """
    found = find_official(raw_dir, allow_download=True)
    if "dir" in found:
        info = {"dataset": "cifar10c", "decision": "official", "how": found["how"], "verified": found["verified"]}
    else:
        info = {"dataset": "cifar10c", "decision": "generate", "why": found["unavailable"]}
        print(f"[autonorm-data] cifar10c: {found['unavailable']}; the corruptions step will generate the set "
              f"locally (rerun download when the official release is reachable or placed in "
              f"{raw_dir / 'cifar10c'})", file=sys.stderr)
    write_json_atomic(marker, {**info, "copied": copied, "time": time.time()})
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


# Provenance of the smoke sets built in smoke.py (bundled real data or generated).
SMOKE_PROVENANCE = {
    "smoke_digits": ("stand-in", "scikit-learn's bundled 8x8 'digits' (UCI optdigits test set), load_digits(); "
                                 "stands in for the paper's vision sets", ["digits.csv.gz"]),
    "smoke_shapes32": ("generated", "32x32 coloured shapes generated by autonorm.data.smoke.generate_shapes32 "
                                    "from split_seed", []),
    "smoke_pos": ("generated", "POS corpus sampled from a small grammar by autonorm.data.smoke.generate_pos "
                               "from split_seed", []),
    "smoke_sentiment": ("generated", "template sentiment sentences from autonorm.data.smoke.generate_sentiment "
                                     "with split_seed", []),
}


def preprocess(name: str, raw_dir: os.PathLike, out: os.PathLike, options: Optional[Dict[str, Any]] = None
               ) -> Dict[str, Any]:
    """Build and atomically write ``out`` (meta.json + split .pt files); returns meta.

    meta gets ``provenance`` (raw files and what they were verified against),
    ``trivial_baseline`` and ``split_files`` (checksums verified on load).
    """
    t0 = time.time()
    meta, splits = build(name, raw_dir, options)
    if "provenance" not in meta and name in SMOKE_PROVENANCE:
        status, note, files = SMOKE_PROVENANCE[name]
        meta["provenance"] = bundled_provenance(status, note, files)
    meta["preprocess_seconds"] = round(time.time() - t0, 3)
    write_processed(out, meta, splits)
    return meta


def corruptions(source: os.PathLike, raw_dir: os.PathLike, out: os.PathLike, seed: int = 0, **kw) -> Dict[str, Any]:
    return build_corruption_set(source, raw_dir, out, seed=seed, **kw)
