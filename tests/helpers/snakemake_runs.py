"""Snakemake run as a person runs it (a subprocess, the default profile), in a temporary copy of
the workflow or from the repository with the results elsewhere, and what its console says."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from .limits import limit

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ["--configfile", "workflow/presets/smoke.yaml"]

#: a dry run lists every job with its files (the default profile lists them too; the tests ask
#: for it, whatever a profile's `quiet` says)
SHOW_JOBS = ["--quiet", "host"]


def snakemake(*args, cwd=ROOT, check=True, timeout=limit(600)):
    """``snakemake ARGS`` in ``cwd``; raises with the end of its output when it fails and ``check``."""
    cmd = ["snakemake", *args, *(SHOW_JOBS if "-n" in args else [])]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-4000:]}\n{p.stderr[-6000:]}")
    return p


def smoke_snakemake(tmp_path: Path, *args, timeout=240):
    """``snakemake --cores 1`` of the smoke preset from the repository, with its results and raw
    folders in ``tmp_path`` (``--config`` items first in ``args``, then ``--`` and targets)."""
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--configfile", "workflow/presets/smoke.yaml",
           "--config", f"results_dir={tmp_path / 'results'}", f"raw_dir={tmp_path / 'raw'}", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def job_counts(output: str) -> Counter:
    """Parse the 'Job stats' table that a dry run prints."""
    counts = Counter()
    in_table = False
    for line in output.splitlines():
        if line.startswith("job") and "count" in line:
            in_table = True
            continue
        if in_table:
            m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
            if m and m.group(1) != "total":
                counts[m.group(1)] = int(m.group(2))
            elif m and m.group(1) == "total":
                counts["total"] = int(m.group(2))
                break
    return counts


def planned_outputs(output: str, rule: str) -> list[str]:
    """The output lines of every planned job of `rule` in a dry run's listing (indented when the
    job is part of a group); other rules' inputs (the `all` rule lists every run) do not count."""
    return re.findall(rf"^\s*rule {rule}:\n(?:\s+(?!output:)\w+:.*\n)*?\s+output: (.+)$", output, re.M)


def copy_workflow(dst: Path) -> Path:
    """The workflow's files (Snakefile, config, rules, profiles, envs) copied into ``dst``."""
    dst.mkdir(parents=True, exist_ok=True)
    for name in ["Snakefile", "config.yaml", "workflow", "profiles", "envs"]:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst / name)
    return dst
