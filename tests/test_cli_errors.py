"""Errors a person can read: every ``autonorm-*`` command ends a problem with one paragraph on
stderr and the exit code of its kind (README "Exit codes", ``autonorm.cli.guarded``); the
traceback only with ``--debug``.

Why: each of these once ended in a traceback where a user needed one sentence.
"""
from __future__ import annotations

import errno
import json
import os

from autonorm import cli, report
from autonorm.analysis import aggregate
from autonorm.io_utils import WriteFailed
from autonorm.report import figures
from autonorm.run import evaluate
from autonorm.run.train import main as train_main
from helpers.tiny_datasets import make_processed
from helpers.tiny_runs import run_config, trained_run


def test_corrupt_processed_split_is_one_paragraph(tmp_path, capsys):
    data, run, _ = trained_run(tmp_path)
    (data / "test.pt").write_bytes(b"garbage")
    rc = evaluate.main(["--run-dir", str(run), "--data-dir", str(data), "--out", str(tmp_path / "e.json"),
                        "--device", "cpu", "--threads", "1", "--recompute"])
    err = capsys.readouterr().err
    assert rc == cli.EXIT_DAMAGED and "test.pt" in err and "Traceback" not in err
    assert err.startswith("autonorm-evaluate: error:") and "\n\n" not in err.strip()  # one paragraph


def test_read_only_run_folder_is_one_paragraph(tmp_path, capsys, monkeypatch):
    data = make_processed(tmp_path / "data", "regression")
    cfg = run_config(data, tmp_path / "run", epochs=1)
    real_open = os.open

    def denied(path, *a, **k):  # root ignores file modes: deny the lock file as a read-only disk would
        if str(path).endswith(".lock"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", denied)
    rc = train_main(["--run-config", json.dumps(cfg), "--threads", "1"])
    err = capsys.readouterr().err
    assert rc == cli.EXIT_WRITE and "permission denied on" in err and str(tmp_path / "run") in err
    assert "Traceback" not in err


def test_full_disk_and_missing_folder_and_debug(tmp_path, capsys, monkeypatch):
    # a missing tables folder: not an empty report
    for main, extra in ((figures.main, ["--out-dir", str(tmp_path / "f")]),
                        (report.main, ["--out", str(tmp_path / "r" / "report.md")])):
        rc = main(["--tables", str(tmp_path / "nope"), *extra])
        err = capsys.readouterr().err
        assert rc == cli.EXIT_MISSING and str(tmp_path / "nope") in err and "autonorm-aggregate" in err
        assert "Traceback" not in err
    # a full disk while aggregate writes its tables
    def full(*a, **k):
        raise WriteFailed(tmp_path / "t" / "summary.csv", OSError(errno.ENOSPC, "No space left on device"))

    monkeypatch.setattr(aggregate, "write_csv_atomic", full)
    rc = aggregate.main(["--results", str(tmp_path / "nothing"), "--datasets", "mnist", "--methods",
                         "frozen_ln", "--seeds", "0", "--out-dir", str(tmp_path / "t")])
    err = capsys.readouterr().err
    assert rc == cli.EXIT_WRITE and "summary.csv" in err and "Free disk space" in err
    assert "Traceback" not in err
    rc = aggregate.main(["--results", str(tmp_path / "nothing"), "--datasets", "mnist", "--methods",
                         "frozen_ln", "--seeds", "0", "--out-dir", str(tmp_path / "t"), "--debug"])
    assert rc == cli.EXIT_WRITE and "Traceback" in capsys.readouterr().err


def test_explain_maps_each_kind_to_its_code(tmp_path):
    from autonorm.data.errors import DataCorruptError, DataMissingError
    from autonorm.io_utils import DamagedRunFile, RunFolderBusy

    assert cli.explain(DamagedRunFile("x"))[0] == cli.EXIT_DAMAGED
    assert cli.explain(DataCorruptError("x"))[0] == cli.EXIT_DAMAGED
    assert cli.explain(DataMissingError("x"))[0] == cli.EXIT_MISSING
    assert cli.explain(FileNotFoundError(errno.ENOENT, "No such file", "/a/b"))[0] == cli.EXIT_MISSING
    assert cli.explain(RunFolderBusy("x"))[0] == cli.EXIT_BUSY
    assert cli.explain(OSError(errno.ENOSPC, "No space", "/a"))[0] == cli.EXIT_WRITE
    code, text = cli.explain(ZeroDivisionError("boom"))
    assert code == cli.EXIT_BUG and "--debug" in text


def test_autonorm_data_ends_as_every_command_does(tmp_path, capsys, monkeypatch):
    """autonorm-data: raw data missing is exit code 2 in one paragraph (README "Exit codes"); a
    problem of another kind (a folder it may not write) ends as every command's does: one
    paragraph with the exit code of its kind, the traceback only with --debug."""
    from autonorm.data import cli as data_cli
    from autonorm.data import pipeline
    from autonorm.data.errors import DataMissingError

    def missing(*a, **k):
        raise DataMissingError("Dataset 'cifar10': missing files: cifar-10-python.tar.gz")

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "out"))

    monkeypatch.setattr(pipeline, "download", missing)
    monkeypatch.setattr(pipeline, "preprocess", denied)
    rc = data_cli.main(["download", "--dataset", "cifar10", "--raw-dir", str(tmp_path / "raw")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("[autonorm-data] ERROR: Dataset 'cifar10': missing files") and "Traceback" not in err
    args = ["preprocess", "--dataset", "cifar10", "--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "out")]
    rc = data_cli.main(args)
    err = capsys.readouterr().err
    assert rc == cli.EXIT_WRITE and err.startswith("autonorm-data: error: permission denied on") and "Traceback" not in err
    assert str(tmp_path / "out") in err and "\n\n" not in err.strip()  # one paragraph
    assert data_cli.main([*args, "--debug"]) == cli.EXIT_WRITE and "Traceback" in capsys.readouterr().err
