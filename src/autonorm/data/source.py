"""How one dataset's raw files are found, verified, fetched and built.

Why one object per dataset: the download step, ``--from`` and preprocess each used to keep
their own table of dataset names (``if name == "sst2"`` in three places). A dataset's
registry entry (``registry.DatasetSpec.source``) now names its ``DatasetSource``, defined
beside its loader in the family module (``vision``, ``nlp``, ``tabular``, ``smoke``), and
the steps ask it. The family modules import torch or pandas, so the registry names the
source as text and it is imported only when a step needs it (building the DAG imports none
of them).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

Options = Dict[str, Any]


@dataclass(frozen=True)
class DatasetSource:
    #: (raw_dir, options) -> (meta, splits): raw files to the processed splits, nothing written;
    #: None for a corruption set's raw files (the make_corruptions step builds the set)
    build: Optional[Callable[[Path, Options], Tuple[dict, dict]]] = None
    #: (raw_dir, options) -> True when every raw file the loader needs is there (not yet verified);
    #: None for a set that needs no raw files (bundled or generated)
    present: Optional[Callable[[Path, Options], bool]] = None
    #: (raw_dir, options) -> integrity.Checks: read and verify the raw files (what preprocess reads)
    verify: Optional[Callable[[Path, Options], Any]] = None
    #: (raw_dir, options) -> None: download what is missing into R/<dataset>
    fetch: Optional[Callable[[Path, Options], None]] = None
    #: (name, local_source.Index, options) -> (plan, stale, missing): which files of a ``--from``
    #: folder to copy where (local_source.place_from)
    plan_from: Optional[Callable] = None
    #: words in a path that name this dataset (to choose between same-named files under --from)
    hints: Tuple[str, ...] = ()
    #: words that, in a path, name another dataset instead ("fashion" for MNIST)
    not_hints: Tuple[str, ...] = ()
    #: raw files (relative to R/<dataset>) whose registered checksum cannot be checked before
    #: copying, because another container of the same content is accepted: the loader verifies
    #: them ("*": every file)
    loader_verifies: Tuple[str, ...] = ()
    #: offline sets: (status, note, files) of their provenance in meta.json
    bundled: Optional[Tuple[str, str, list]] = None
