"""What a workflow run shows on the console: one line per job, and each failed job's own message.

Snakemake prints every job as a block (rule, input, output, log, jobid, reason, wildcards,
threads, resources): on the smoke grid, 166 KB that bury the progress. Its ``quiet: [rules]``
would silence more than the blocks: a dry run's list of jobs, ``--printshellcmds``'s commands, and
the error blocks of its own log file, which :func:`failure_paragraphs` reads. So the Snakefile
calls :func:`shorten_console` in a real run instead: on the console alone, a job is one line
(rule and wildcards), a failed job one line (rule, jobid, log), and the scheduler's "Select jobs
to execute..." is left out; Snakemake's log file keeps every block, a dry run lists its jobs in
full, and ``--printshellcmds`` shows each command under its job's line (``--verbose``: the
blocks as Snakemake prints them).

Snakemake's ``show-failed-logs`` prints a failed job's whole log, which for a training is every
epoch before the traceback. The Snakefile's ``onerror`` hands Snakemake's own log to
:func:`failure_paragraphs` instead: per failed job, its rule and the last lines of its log (the
whole log when it is short), where the job's own error message is."""
from __future__ import annotations

import logging
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


class OneLineJobs(logging.Formatter):
    """Snakemake's console formatter, but a job, a finished job and a failed job one line each."""

    def __init__(self, inner: logging.Formatter):
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        from snakemake.logging import timestamp
        from snakemake_interface_logger_plugins.common import LogEvent

        event = getattr(record, "event", None)
        indent = "    " if getattr(record, "indent", False) else ""
        if event == LogEvent.JOB_INFO:
            wildcards = ", ".join(f"{k}={v}" for k, v in (getattr(record, "wildcards", None) or {}).items())
            rule = f"rule {record.rule_name}" + (f": {wildcards}" if wildcards else "")
            return f"{indent}{timestamp()} {rule} (jobid {record.jobid})"
        if event == LogEvent.JOB_FINISHED:
            return f"{timestamp()} {record.msg}"
        if event == LogEvent.JOB_ERROR:
            logs = ", ".join(getattr(record, "log", None) or [])
            message = f": {record.rule_msg}" if getattr(record, "rule_msg", None) else ""
            where = f"; log: {logs} (its last lines at the end)" if logs else ""
            return f"{indent}{timestamp()} Error in rule {record.rule_name} (jobid {record.jobid}){message}{where}"
        text = self.inner.format(record)
        return shorten_failed_command(text) if record.levelno >= logging.ERROR else text


#: a failed shell command is shown by its first characters on the console (a training's command
#: holds its whole run config: thousands of characters of JSON)
COMMAND_CHARS = 160
_FAILED_COMMAND = re.compile(r"^Command '(?P<cmd>.*?)' returned non-zero exit status (?P<code>-?\d+)\.$", re.M | re.S)


def shorten_failed_command(text: str, chars: int = COMMAND_CHARS) -> str:
    """Snakemake's "Command '...' returned non-zero exit status N." with the command cut to its
    first ``chars`` characters (the log file and --printshellcmds keep it whole)."""
    def cut(m: re.Match) -> str:
        cmd = m["cmd"] if len(m["cmd"]) <= chars else m["cmd"][:chars] + " ..."
        return f"Command '{cmd}' returned non-zero exit status {m['code']}."
    return _FAILED_COMMAND.sub(cut, text)


#: the scheduler's messages between jobs, which tell a person nothing (Snakemake's log file keeps them)
SCHEDULER_CHATTER = re.compile(r"^(Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.)$")


class NoSchedulerChatter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not SCHEDULER_CHATTER.match(str(record.msg))


def shorten_console() -> bool:
    """On Snakemake's console handler (its log file is left as it is): :class:`OneLineJobs`, and
    no scheduler chatter. False when there is no such handler (a logger plugin writes the console)."""
    from snakemake.logging import logger

    done = False
    for handler in logger.handlers:
        if handler.name == "DefaultStreamHandler" and not isinstance(handler.formatter, OneLineJobs):
            handler.setFormatter(OneLineJobs(handler.formatter))
            handler.addFilter(NoSchedulerChatter())
            done = True
    return done
