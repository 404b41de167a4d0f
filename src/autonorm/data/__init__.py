"""Data layer of autonorm-repro: download, verify, preprocess and load the datasets.

Public API (formats in docs/data.md): ``load_processed``, ``ProcessedDataset``,
``load_corruptions``, ``DATASETS`` (name -> DatasetSpec with family/task/standin),
``CORRUPTIONS`` (the 15 CIFAR-10-C names); CLI ``autonorm-data``
(``autonorm.data.cli:main``).  Heavy modules (torchvision, datasets, nltk) are
imported lazily by the functions that need them.
"""
from .errors import DataCorruptError, DataError, DataMissingError, DataOptionError
from .registry import (CHECKSUMS, CORRUPTION_SETS, CORRUPTIONS, DATASETS, PAPER_DATASETS, RAW_LAYOUT,
                       SMOKE_DATASETS, DatasetSpec)

_STORAGE_NAMES = ("ProcessedDataset", "default_device", "load_corruptions", "load_processed")


def __getattr__(name):
    # .storage imports torch; the registry above must stay importable without it (Snakemake
    # imports it while building the DAG, and the evaluate job's cache hit starts no torch).
    if name in _STORAGE_NAMES:
        from . import storage

        return getattr(storage, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "load_processed", "load_corruptions", "ProcessedDataset", "DATASETS", "CORRUPTIONS", "DatasetSpec",
    "PAPER_DATASETS", "SMOKE_DATASETS", "CORRUPTION_SETS", "RAW_LAYOUT", "CHECKSUMS",
    "DataError", "DataMissingError", "DataCorruptError", "DataOptionError", "default_device",
]
