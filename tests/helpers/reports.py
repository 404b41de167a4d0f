"""The report rendered from a results folder's tables (``autonorm-report``), and the parts of its
markdown a test reads."""
from __future__ import annotations

import json
import re
from pathlib import Path

from autonorm import report
from autonorm.output_names import FIGURE_NAMES


def render(root: Path, cfg: dict, html: bool = False) -> str:
    """report.md of ``root`` (its tables/ and runs/; figures/ gets placeholder files), written into
    ``root``; with ``html`` also report.html."""
    figs = root / "figures"
    figs.mkdir(exist_ok=True)
    for name in FIGURE_NAMES:  # the report only links them; content is test_figures' job
        (figs / name).write_bytes(b"x")
    out = root / "report.md"
    argv = ["--tables", str(root / "tables"), "--figures-dir", str(figs), "--out", str(out),
            "--config-json", json.dumps(cfg), "--provenance-from", str(root / "runs")]
    if html:
        argv += ["--html-out", str(root / "report.html")]
    assert report.main(argv) == 0
    return out.read_text()


def section(text: str, title: str) -> str:
    """The ``## `` section that starts at ``title``, up to the next one."""
    start = text.index(title)
    nxt = text.find("\n## ", start + len(title))
    return text[start: nxt if nxt != -1 else len(text)]


def subsection(text: str, title: str) -> str:
    """The part that starts at ``title``, up to the next heading of any level."""
    start = text.index(title)
    nxt = re.search(r"\n##+ ", text[start + len(title):])
    return text[start: start + len(title) + nxt.start() if nxt else len(text)]


def row(block: str, prefix: str) -> str:
    """The first line of ``block`` that starts with ``prefix``."""
    return next(line for line in block.splitlines() if line.startswith(prefix))
