"""Which code a process runs: a digest of this package's source files.

Taken once when the package is first imported (``autonorm/__init__.py``), so that an edit of the
source after that moment, even before an entry point's ``main()`` starts, is seen as other code
(run/eval_cache.py refuses to store a result then). Two digests: the whole package, and the part
that computes learned numbers (everything but the report, the statistics and the Snakefile's own
helpers), which a study record keeps per run so that records of different code are not merged
(analysis/records.py)."""
from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent
#: folders whose code never changes a learned number: it reads finished runs (report, analysis) or
#: serves the Snakefile alone (workflow_support: its checks, its console, the profile installer)
NOT_TRAINING = ("report", "analysis", "workflow_support")


def package_digest(root: Path = PACKAGE_ROOT, training_only: bool = False) -> str:
    """sha256 over the package's .py files (relative path and bytes) as they are on disk now."""
    h = hashlib.sha256()
    for p in sorted(Path(root).rglob("*.py")):
        rel = p.relative_to(root)
        if training_only and rel.parts[0] in NOT_TRAINING:
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()
