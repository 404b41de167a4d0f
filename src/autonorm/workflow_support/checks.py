"""Checks the Snakefile runs before any job, beside the config checks (``autonorm.config.workflow``)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..config.run_config import ConfigError


def check_writable(results: str | Path) -> None:
    """Refuse a results folder (or its runs/ folder) this process cannot write, in one paragraph,
    before Snakemake deletes or writes anything in it (it removes a rerun job's old outputs
    before any job's own code runs). Tried by creating a file: file modes do not stop root, a
    read-only or immutable folder does."""
    results = Path(results)
    for folder in (results, results / "runs"):
        if folder == results / "runs" and not folder.is_dir():
            continue
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise ConfigError(f"results folder {folder} is not writable ({e.strerror or e}): nothing was run "
                              f"and nothing in it was touched. Make it writable, or set results_dir to another "
                              f"folder (--config results_dir=...).") from None
