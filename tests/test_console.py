"""What reaches the console of a workflow run: progress, each failed job's own message (the last
lines of its log), a dry run's list of jobs, and the default profile's settings behind them.

Why: a person reads the console first; a failure must say what went wrong there, not only that
a job failed, and a dry run must say what it would run.
"""
from __future__ import annotations

import logging

import pytest

from helpers.snakemake_runs import smoke_snakemake


def test_the_default_profile_keeps_going_so_every_missing_dataset_is_named():
    from pathlib import Path

    import yaml

    prof = yaml.safe_load((Path(__file__).resolve().parents[1] / "profiles" / "default" / "config.yaml").read_text())
    assert prof.get("keep-going") is True and "printshellcmds" not in prof


@pytest.mark.dag  # runs Snakemake
def test_a_failed_download_reaches_the_console_with_its_own_message(tmp_path):
    """Under the default profile: an offline download from an empty folder fails, and the console
    shows the job's own paragraph (the missing files, where to put them, --from), not only
    'a job failed'."""
    (tmp_path / "empty").mkdir()
    r = smoke_snakemake(tmp_path, "datasets=[cifar10]", 'ablations={"datasets": [], "variants": []}',
                   f'raw_from={{"cifar10": "{tmp_path / "empty"}"}}', "--", "dataset_cifar10")
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "Dataset 'cifar10'" in out and "missing" in out, out[-3000:]
    assert "cifar-10-python.tar.gz" in out and "Failed: rule download; log " in out and "download/cifar10" in out
    assert "Logfile" not in out  # the job's message once, not Snakemake's whole-log dump as well


def test_a_long_failed_log_shows_its_last_lines(tmp_path, monkeypatch):
    """A training that failed after many epochs: its last lines (the traceback's message) reach the
    console, not every epoch before it; a short log is shown whole; a path with a space is kept."""
    from autonorm.workflow_support import console

    monkeypatch.chdir(tmp_path)
    long_log = tmp_path / "logs dir" / "train; mnist.log"
    long_log.parent.mkdir()
    long_log.write_text("".join(f"epoch {i}/40 loss 0.5\n" for i in range(1, 41))
                        + "Traceback (most recent call last):\nRuntimeError: CUDA out of memory\n")
    short_log = tmp_path / "short.log"
    short_log.write_text("Dataset 'cifar10': missing files\n")
    main_log = tmp_path / "snakemake.log"
    main_log.write_text(
        "[Wed Dec  2 10:28:03 2026]\nError in rule train:\n    message: None\n    jobid: 1\n"
        "    output: results/runs/mnist/frozen_ln/seed0/status.json\n"
        f"    log: {long_log} (check log file(s) for error details)\n"
        "    wildcards: dataset=mnist, method=frozen_ln, seed=0\n    shell:\n        autonorm-train ...\n"
        "Error in rule download:\n    jobid: 2\n"
        f"    log: {short_log.name} (check log file(s) for error details)\n"
        "Shutting down, this might take some time.\n")
    out = console.failure_paragraphs([str(main_log)])
    first, second = out.split("\n\n")
    assert first.startswith(f"Failed: rule train (dataset=mnist, method=frozen_ln, seed=0); log {long_log}, "
                            f"its last {console.TAIL_LINES} of 42 lines:")
    assert "RuntimeError: CUDA out of memory" in first and "epoch 1/40" not in first
    assert len(first.splitlines()) == 1 + console.TAIL_LINES
    assert second == "Failed: rule download; log short.log:\n    Dataset 'cifar10': missing files"


@pytest.mark.dag  # runs Snakemake
def test_a_dry_run_lists_the_jobs_it_would_run(tmp_path):
    r = smoke_snakemake(tmp_path, "datasets=[smoke_digits]", "methods=[frozen_ln,autonorm_s]", "seeds=[0]",
                   'ablations={"datasets": [], "variants": []}', "-n")
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout + r.stderr
    assert "rule train:" in out and "wildcards: dataset=smoke_digits, method=autonorm_s, seed=0" in out
    assert "rule preprocess:" in out


def _record(event, level=logging.INFO, msg="", **fields):
    record = logging.LogRecord("snakemake.logging", level, __file__, 0, msg, None, None)
    record.__dict__.update(event=event, **fields)
    return record


def test_a_real_runs_console_shows_a_job_in_one_line_and_the_log_file_keeps_its_block():
    """The console formatter the Snakefile puts on a real run's console: a job is one line (rule and
    wildcards), a failed job one line naming its log, a failed command cut short; what Snakemake's
    own formatter prints (its log file, a dry run) is unchanged, and so are the shell commands that
    --printshellcmds shows."""
    pytest.importorskip("snakemake")
    from snakemake.logging import DefaultFormatter
    from snakemake_interface_logger_plugins.common import LogEvent

    from autonorm.workflow_support.console import NoSchedulerChatter, OneLineJobs

    snakemakes, ours = DefaultFormatter(), OneLineJobs(DefaultFormatter())
    job = _record(LogEvent.JOB_INFO, rule_name="train", jobid=12, wildcards={"dataset": "mnist", "seed": 0},
                  rule_msg=None, local=True, is_checkpoint=False, input=["data/mnist"],
                  output=["runs/mnist/frozen_ln/seed0/status.json"], log=["logs/train.log"], benchmark=None,
                  reason="Missing output files", priority=0, threads=2, resources={"mem_mb": 4000}, indent=False)
    block = snakemakes.format(job)
    assert "output: runs/mnist/frozen_ln/seed0/status.json" in block and "resources:" in block
    line = ours.format(job)
    assert line.endswith("] rule train: dataset=mnist, seed=0 (jobid 12)") and "\n" not in line
    error = _record(LogEvent.JOB_ERROR, logging.ERROR, rule_name="train", jobid=12, rule_msg=None,
                    log=["logs/train.log"], indent=False)
    assert ours.format(error).endswith("] Error in rule train (jobid 12); log: logs/train.log (its last lines at the end)")
    command = "autonorm-train --run-config '" + "x" * 6000 + "'"
    failed = _record(None, logging.ERROR, f"RuleException:\nCalledProcessError in file Snakefile, line 3:\n"
                                          f"Command 'set -euo pipefail; {command}' returned non-zero exit status 2.")
    text = ours.format(failed)
    assert len(text) < 400 and text.endswith("...' returned non-zero exit status 2.") and text.startswith("RuleException:")
    assert snakemakes.format(failed) == failed.msg  # the log file keeps the whole command
    shell = _record(LogEvent.SHELLCMD, msg="Shell command: autonorm-train --run-config x", shellcmd="autonorm-train ...")
    assert ours.format(shell) == snakemakes.format(shell)
    chatter = NoSchedulerChatter()
    assert not chatter.filter(_record(None, msg="Select jobs to execute..."))
    assert not chatter.filter(_record(LogEvent.JOB_STARTED, msg="Execute 2 jobs..."))
    assert chatter.filter(_record(None, msg="4 of 14 steps (29%) done"))
