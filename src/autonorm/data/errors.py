"""Exceptions of the data layer.

Why a dedicated hierarchy: the CLI (and Snakemake through it) must fail
*before training* with a message a user can act on (which file, which
checksum, where to put it).  Catching ``DataError`` in one place and printing
its message keeps those messages consistent; every other exception is a bug.
"""
from __future__ import annotations


class DataError(RuntimeError):
    """Base class: a dataset problem the user can fix (missing/corrupt raw files...)."""


class DataMissingError(DataError):
    """A required raw file is absent (and could not be downloaded)."""


class DataCorruptError(DataError):
    """A raw file exists but fails checksum or format verification."""


class DataOptionError(DataError, ValueError):
    """A dataset option (the ``data`` block of the config) has an invalid value; the message names the key."""
