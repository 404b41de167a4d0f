"""What a failed workflow shows on the console: each failed job's own message, in one paragraph.

Snakemake's ``show-failed-logs`` prints a failed job's whole log, which for a training is every
epoch before the traceback. The Snakefile's ``onerror`` hands Snakemake's own log to
:func:`failure_paragraphs` instead: per failed job, its rule and the last lines of its log (the
whole log when it is short), where the job's own error message is."""
from __future__ import annotations

import re
from pathlib import Path

#: a log of at most this many lines is shown whole; a longer one by its last lines
TAIL_LINES = 15

_ERROR = re.compile(r"^Error in rule (?P<rule>\S+):\s*$")
_LOG = re.compile(r"^\s+log: (?P<paths>.+) \(check log file\(s\) for error details\)\s*$")
_WILDCARDS = re.compile(r"^\s+wildcards: (?P<w>.+)$")


def failed_jobs(snakemake_log: str) -> list[tuple[str, str, list[Path]]]:
    """(rule, wildcards, logs) of every 'Error in rule' block of Snakemake's own log, in order."""
    jobs: list[tuple[str, str, list[Path]]] = []
    current = None
    for line in snakemake_log.splitlines():
        if (m := _ERROR.match(line)):
            current = [m["rule"], "", []]
            jobs.append(current)
        elif current is not None and (m := _WILDCARDS.match(line)):
            current[1] = m["w"].strip()
        elif current is not None and (m := _LOG.match(line)):
            current[2] = _split_paths(m["paths"])
        elif current is not None and line and not line[0].isspace():
            current = None  # the block ended
    seen, out = set(), []
    for rule, wildcards, logs in jobs:
        key = (rule, wildcards, tuple(logs))
        if key not in seen:  # a job retried (SLURM attempts) is shown once
            seen.add(key)
            out.append((rule, wildcards, logs))
    return out


def _split_paths(text: str) -> list[Path]:
    """Snakemake joins a job's logs with ', '; a path that itself holds ', ' is kept whole."""
    whole = Path(text.strip())
    if whole.exists() or ", " not in text:
        return [whole]
    return [Path(p.strip()) for p in text.split(", ")]


def tail(path: Path, lines: int = TAIL_LINES) -> tuple[list[str], int]:
    """The last ``lines`` lines of a log and how many lines it has ((['(no log was written)'], 0)
    when it is missing)."""
    try:
        text = path.read_text(errors="replace").rstrip("\n").splitlines()
    except OSError:
        return ["(no log was written)"], 0
    return text[-lines:], len(text)


def failure_paragraphs(snakemake_log_paths, lines: int = TAIL_LINES) -> str:
    """One paragraph per failed job: its rule, wildcards and log, and the log's last lines."""
    out = []
    for p in snakemake_log_paths if isinstance(snakemake_log_paths, (list, tuple)) else [snakemake_log_paths]:
        try:
            text = Path(p).read_text(errors="replace")
        except OSError:
            continue
        for rule, wildcards, logs in failed_jobs(text):
            head = f"Failed: rule {rule}" + (f" ({wildcards})" if wildcards else "")
            for log in logs:
                body, n = tail(log, lines)
                cut = f", its last {lines} of {n} lines" if n > lines else ""
                out.append(f"{head}; log {log}{cut}:\n" + "\n".join(f"    {b}" for b in body))
    return "\n\n".join(out)
