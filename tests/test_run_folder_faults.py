"""Run-folder faults (issue 14, items 1, 2, 3, 8, 9): stale outputs, concurrent
writers, corrupt checkpoints, failed writes (and atomic JSON), a damaged model.pt refused by every reader
(its sha256 is recorded when it is written). Tiny models, 1-3 epochs, CPU."""

import errno
import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from autonorm import cli
from autonorm.run import checkpoint as ckpt_io
from autonorm.run import evaluate, export, train
from autonorm.io_utils import RunFolderBusy, WriteFailed, write_json_atomic
from autonorm.provenance import run_config_hash
from autonorm.run.runlock import RunFolderLock
from autonorm.run.train import train_run
from helpers.tiny_datasets import make_processed, rewrite_split
from helpers.tiny_runs import run_config, trained_run

OLD_OUTPUTS = ("status.json", "metrics.json", "model.pt", "model.json", "history.json", "freeze.json",
               "failed.json", "checkpoint.pt", "checkpoint.prev.pt")


@pytest.fixture(scope="module")
def reg_data(tmp_path_factory):
    return make_processed(tmp_path_factory.mktemp("data"), "regression")


def _cfg(data, run, **kw):
    cfg = run_config(data, run, method=kw.pop("method", "autonorm_s"), epochs=kw.pop("epochs", 1),
                     t_freeze=1, eps_h=1e-9)  # H >= 1e-9 in practice: freezes at epoch 1 (0 is refused)
    cfg["train"].update(kw)
    return cfg


def _train_cli(cfg, tmp_path, *extra):
    (tmp_path / "run.json").write_text(json.dumps(cfg))
    return train.main(["--run-config", str(tmp_path / "run.json"), *extra])


# --------------------------------------------------------------------------- item 1: stale results
def test_item1_run_config_hash_ignores_paths_not_settings(reg_data, tmp_path):
    cfg = _cfg(reg_data, tmp_path / "a")
    moved = cfg | {"out_dir": "/elsewhere/run", "data_dir": "/elsewhere/data"}
    threads = cfg | {"runtime": cfg["runtime"] | {"threads": 7}}
    other_lr = cfg | {"train": cfg["train"] | {"lr": 1e-2}}
    assert run_config_hash(moved) == run_config_hash(cfg) == run_config_hash(threads)
    assert run_config_hash(other_lr) != run_config_hash(cfg)
    assert len(run_config_hash(cfg)) == 16
    # a distillation student: its teacher's folder is a path (relative or absolute results_dir),
    # its teacher's config hash is what it learns from
    student = cfg | {"distill": {"teacher": "teacher_mlp", "teacher_config_hash": "aaaa",
                                 "teacher_run_dir": "results/runs/d/teacher_mlp/seed0",
                                 "temperature": 4.0, "weight": 0.5}}
    moved_teacher = student | {"distill": student["distill"] | {"teacher_run_dir": "/abs/results/runs/d/teacher_mlp/seed0"}}
    other_teacher = student | {"distill": student["distill"] | {"teacher_config_hash": "bbbb"}}
    assert run_config_hash(moved_teacher) == run_config_hash(student) != run_config_hash(cfg)
    assert run_config_hash(other_teacher) != run_config_hash(student)


def test_item1_every_output_records_the_config_hash(reg_data, tmp_path):
    cfg = _cfg(reg_data, tmp_path / "run", epochs=2)
    assert _train_cli(cfg, tmp_path) == 0
    run, h = tmp_path / "run", run_config_hash(cfg)
    for name in ("metrics.json", "status.json", "freeze.json", "model.json", "env.json"):
        assert json.loads((run / name).read_text())["config_hash"] == h, name
    assert [e["config_hash"] for e in json.loads((run / "history.json").read_text())] == [h, h]
    assert run_config_hash(json.loads((run / "config.json").read_text())) == h
    # item G: config, versions, device and wall time are recorded
    env = json.loads((run / "env.json").read_text())
    metrics = json.loads((run / "metrics.json").read_text())
    assert env["packages"]["torch"] and env["config_hash"] == h
    assert env["device"] == "cpu" and env["python"] and env["time_utc"]
    assert metrics["wall_time_s"] > 0 and metrics["cost"]["train_wall_time_s"] > 0
    assert metrics["cost"]["device"] == "cpu" and metrics["finished_utc"]


def test_item1_changed_config_killed_rerun_leaves_no_old_outputs(reg_data, tmp_path, caplog):
    run = tmp_path / "run"
    old = _cfg(reg_data, run, epochs=2, lr=1e-3)
    assert _train_cli(old, tmp_path) == 0
    assert all((run / n).exists() for n in ("status.json", "metrics.json", "model.pt", "freeze.json"))
    new = _cfg(reg_data, run, epochs=2, lr=3e-3)
    with caplog.at_level(logging.WARNING, logger="autonorm.run.train"):
        assert train_run(new, stop_after_epochs=1) is None  # killed after epoch 1 of the new config
    assert "held outputs of another config" in caplog.text
    for name in ("status.json", "metrics.json", "model.pt", "model.json", "freeze.json", "failed.json",
                 "checkpoint.prev.pt"):
        assert not (run / name).exists(), f"{name} of the old config survived the rerun"
    assert json.loads((run / "config.json").read_text())["train"]["lr"] == 3e-3
    hist = json.loads((run / "history.json").read_text())
    assert [e["epoch"] for e in hist] == [1] and hist[0]["config_hash"] == run_config_hash(new)
    assert torch.load(run / "checkpoint.pt", weights_only=True)["config_hash"] == run_config_hash(new)


def test_item1_failed_start_after_config_change_leaves_no_old_outputs(reg_data, tmp_path):
    run = tmp_path / "run"
    assert train_run(_cfg(reg_data, run)) is not None
    broken = _cfg(reg_data, run, lr=1e-2) | {"data_dir": str(tmp_path / "missing")}
    with pytest.raises(FileNotFoundError):
        train_run(broken)
    assert not any((run / n).exists() for n in OLD_OUTPUTS)


def test_item1_evaluate_refuses_a_run_of_another_config(reg_data, tmp_path, capsys):
    run, out = tmp_path / "run", tmp_path / "eval.json"
    cfg = _cfg(reg_data, run) | {"variant": "tau_0.5", "same_run_as": "autonorm_s"}
    assert train_run(cfg) is not None
    args = ["--run-dir", str(run), "--data-dir", str(reg_data), "--out", str(out)]
    other = run_config_hash(cfg | {"train": cfg["train"] | {"lr": 1e-2}})
    assert evaluate.main(args + ["--expected-config-hash", other]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert str(run) in err and other in err
    h = run_config_hash(cfg)
    assert evaluate.main(args + ["--expected-config-hash", h]) == 0
    result = json.loads(out.read_text())
    assert result["config_hash"] == h and result["variant"] == "tau_0.5" and result["same_run_as"] == "autonorm_s"


def test_item1_evaluate_refuses_new_config_beside_old_metrics(reg_data, tmp_path, capsys):
    # the folder an older trainer left: a new config.json written beside the previous run's metrics
    run, out = tmp_path / "run", tmp_path / "eval.json"
    cfg = _cfg(reg_data, run)
    assert train_run(cfg) is not None
    write_json_atomic(run / "config.json", cfg | {"train": cfg["train"] | {"lr": 1e-2}})
    assert evaluate.main(["--run-dir", str(run), "--data-dir", str(reg_data), "--out", str(out)]) == 2
    assert not out.exists()
    assert "metrics.json has config hash" in capsys.readouterr().err


# --------------------------------------------------------------------------- item 2: diverged rerun
def test_item2_diverged_rerun_leaves_no_old_gate_data(tmp_path):
    good = make_processed(tmp_path / "good", "regression")
    bad = make_processed(tmp_path / "bad", "regression")
    x = torch.load(bad / "train.pt", weights_only=True)
    x["x"][:, 0] = float("nan")
    rewrite_split(bad, "train", x)  # the NaN is put there on purpose, as a preprocess would record it
    run = tmp_path / "run"
    assert train_run(_cfg(good, run)) is not None
    assert json.loads((run / "freeze.json").read_text())["froze"] is True
    rerun = _cfg(bad, run, epochs=2)
    assert _train_cli(rerun, tmp_path, "--record-divergence") == 0
    for name in ("metrics.json", "model.pt", "model.json", "history.json", "freeze.json", "checkpoint.pt"):
        assert not (run / name).exists(), f"{name} of the previous run survived a diverged rerun"
    h = run_config_hash(rerun)
    failed = json.loads((run / "failed.json").read_text())
    status = json.loads((run / "status.json").read_text())
    assert failed["epoch"] == 1 and failed["config_hash"] == h
    assert status["status"] == "diverged" and status["config_hash"] == h


# --------------------------------------------------------------------------- item 3: two writers
HOLDER = textwrap.dedent("""
    import sys, time
    from autonorm.run.runlock import RunFolderLock
    with RunFolderLock(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(60)
""")


def test_item3_second_writer_is_refused_naming_the_holder(reg_data, tmp_path, caplog):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text('{"mine": true}')
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in run.iterdir()}
        with pytest.raises(RunFolderBusy, match=rf"{run}.*pid {holder.pid} on host "):
            train_run(_cfg(reg_data, run))
        with caplog.at_level(logging.ERROR, logger="autonorm.run.train"):
            assert _train_cli(_cfg(reg_data, run), tmp_path) == 4
        assert f"pid {holder.pid}" in caplog.text
        after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in run.iterdir()}
        assert after == before  # the refused writer touched nothing
    finally:
        holder.kill()
        holder.wait()
    # the kernel drops a dead holder's lock: the folder is usable again
    with RunFolderLock(run):
        pass


# --------------------------------------------------------------------------- item 8: corrupt checkpoint
def test_item8_truncated_checkpoint_falls_back_to_the_previous_one(tmp_path, caplog):
    data = make_processed(tmp_path / "data", "regression")
    full = train_run(_cfg(data, tmp_path / "full", epochs=3))
    run = tmp_path / "run"
    assert train_run(_cfg(data, run, epochs=3), stop_after_epochs=2) is None
    assert torch.load(run / "checkpoint.prev.pt", weights_only=True)["epoch"] == 1
    size = (run / "checkpoint.pt").stat().st_size
    with open(run / "checkpoint.pt", "r+b") as f:
        f.truncate(size // 2)
    with caplog.at_level(logging.WARNING, logger="autonorm.run.checkpoint"):
        resumed = train_run(_cfg(data, run, epochs=3))
    assert f"{run / 'checkpoint.pt'} is damaged" in caplog.text
    assert resumed["test"] == full["test"]  # epoch 2 retrained from epoch 1: same numbers
    assert torch.load(run / "checkpoint.pt", weights_only=True)["epoch"] == 3
    assert torch.load(run / "checkpoint.prev.pt", weights_only=True)["epoch"] == 2  # the corrupt one was not kept


def test_item8_no_readable_checkpoint_starts_fresh(tmp_path, caplog):
    data = make_processed(tmp_path / "data", "regression")
    run = tmp_path / "run"
    assert train_run(_cfg(data, run, epochs=2), stop_after_epochs=1) is None
    (run / "checkpoint.pt").write_bytes(b"PK\x03\x04 garbage")
    with caplog.at_level(logging.WARNING, logger="autonorm.run.checkpoint"):
        m = train_run(_cfg(data, run, epochs=2))
    assert "is damaged" in caplog.text and m["epochs"] == 2
    assert [e["epoch"] for e in json.loads((run / "history.json").read_text())] == [1, 2]


def test_item8_rotation_keeps_the_previous_checkpoint(tmp_path):
    def fake(epoch, h="h"):
        return {"format": ckpt_io.CHECKPOINT_FORMAT, "config_hash": h, "epoch": epoch, "step": 0,
                "train_time_s": 0.0, "model": {}, "optimizer": {}, "history": [], "freeze": {}, "rng": {}}

    cpu = torch.device("cpu")
    ckpt_io.save_checkpoint(fake(1), tmp_path)
    ckpt_io.save_checkpoint(fake(2), tmp_path)
    assert ckpt_io.load_checkpoint(tmp_path, cpu, "h")["epoch"] == 2
    assert torch.load(tmp_path / "checkpoint.prev.pt", weights_only=True)["epoch"] == 1
    (tmp_path / "checkpoint.pt").unlink()  # a kill between the two renames of a save
    assert ckpt_io.load_checkpoint(tmp_path, cpu, "h")["epoch"] == 1
    assert ckpt_io.load_checkpoint(tmp_path, cpu, "other") is None  # another config: start fresh


# --------------------------------------------------------------------------- item 9: failed writes
def test_item9_disk_full_error_names_the_checkpoint_path(reg_data, tmp_path, monkeypatch):
    def full_disk(obj, f, *a, **k):
        f.write(b"partial")
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")

    monkeypatch.setattr(ckpt_io.torch, "save", full_disk)
    run = tmp_path / "run"
    with pytest.raises(WriteFailed, match=rf"cannot write {run / 'checkpoint.pt'}: .*unexpected pos"):
        train_run(_cfg(reg_data, run))
    assert not list(run.glob(".*.tmp"))
    assert _train_cli(_cfg(reg_data, run), tmp_path) == 5


def test_item9_json_write_error_names_the_path(tmp_path, monkeypatch):
    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    target = tmp_path / "metrics.json"
    with pytest.raises(WriteFailed, match=rf"cannot write {target}: No space left on device"):
        write_json_atomic(target, {"a": 1})
    assert list(tmp_path.iterdir()) == []
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.undo()
    with pytest.raises(WriteFailed, match=rf"cannot write {blocker / 'run' / 'x.json'}"):
        write_json_atomic(blocker / "run" / "x.json", {})


def test_item9_temp_files_of_dead_writers_are_removed_on_next_start(reg_data, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    stale = [run / ".checkpoint.pt.99999.tmp", run / ".metrics.json.k2j3h4.tmp", run / ".model.pt.123.tmp"]
    for p in stale:
        p.write_bytes(b"left by a killed writer")
    old = time.time() - 3600
    for p in stale:
        os.utime(p, (old, old))
    assert train_run(_cfg(reg_data, run)) is not None
    assert not any(p.exists() for p in stale)
    assert not list(run.glob(".*.tmp")) and (run / ".lock").exists()


def test_io_utils_atomic_json_roundtrip(tmp_path):
    """write_json_atomic: numpy scalars serialise, NaN becomes null, no temp file is left behind."""
    from autonorm.io_utils import read_json, write_json_atomic, write_text_atomic

    p = tmp_path / "sub" / "x.json"
    write_json_atomic(p, {"a": np.float32(1.5), "b": np.int64(3), "c": float("nan"),
                          "d": [np.bool_(True)], "e": np.arange(2)})
    assert read_json(p) == {"a": 1.5, "b": 3, "c": None, "d": [True], "e": [0, 1]}
    write_text_atomic(p.with_suffix(".txt"), "hello")
    assert p.with_suffix(".txt").read_text() == "hello"
    assert sorted(f.name for f in p.parent.iterdir()) == ["x.json", "x.txt"]
    import os

    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask  # as open() would, not mkstemp's 0600


# --------------------------------------------------------------------------- damaged model.pt and checkpoints
def _flip_bytes(path: Path, n: int = 8) -> None:
    """Flip n bytes in the middle of a file (inside a tensor's storage: torch.load still reads it)."""
    raw = bytearray(path.read_bytes())
    mid = len(raw) // 2
    for i in range(mid, mid + n):
        raw[i] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_a_damaged_model_is_refused_by_every_reader(tmp_path, capsys):
    data, run, _ = trained_run(tmp_path)
    assert "model.pt" in json.loads((run / "model.json").read_text())["sha256"]
    _flip_bytes(run / "model.pt")
    torch.load(run / "model.pt", weights_only=True)  # still loads: only the hash can tell
    out = tmp_path / "eval.json"
    rc = evaluate.main(["--run-dir", str(run), "--data-dir", str(data), "--out", str(out),
                        "--device", "cpu", "--threads", "1"])
    err = capsys.readouterr().err
    assert rc == cli.EXIT_DAMAGED and not out.exists()
    assert f"{run / 'model.pt'} is damaged" in err and "rule train" in err and "Traceback" not in err
    rc = export.main(["--run-dir", str(run), "--data-dir", str(data), "--out", str(tmp_path / "exp")])
    assert rc == cli.EXIT_DAMAGED and "is damaged" in capsys.readouterr().err


def test_a_damaged_checkpoint_is_not_resumed_from(tmp_path, caplog):
    data = make_processed(tmp_path / "data", "regression")
    run = tmp_path / "run"
    cfg = run_config(data, run, epochs=3)
    assert train.main(["--run-config", json.dumps(cfg), "--threads", "1", "--stop-after-epochs", "2"]) == 0
    _flip_bytes(run / ckpt_io.CHECKPOINT)
    ckpt = ckpt_io.load_checkpoint(run, torch.device("cpu"), run_config_hash(cfg))
    assert ckpt is not None and ckpt["epoch"] == 1  # the previous, intact one
    kept = list((run / ckpt_io.DAMAGED_DIR).iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("checkpoint.pt.")
    assert "sha256 is not one recorded" in caplog.text


def test_both_damaged_checkpoints_are_kept_for_inspection(tmp_path):
    data = make_processed(tmp_path / "data", "regression")
    run = tmp_path / "run"
    cfg = run_config(data, run, epochs=3)
    assert train.main(["--run-config", json.dumps(cfg), "--threads", "1", "--stop-after-epochs", "2"]) == 0
    for name in (ckpt_io.CHECKPOINT, ckpt_io.PREVIOUS):
        (run / name).write_bytes(b"not a checkpoint")
    assert train.main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0  # starts afresh
    kept = sorted(p.name.split(".20")[0] for p in (run / ckpt_io.DAMAGED_DIR).iterdir())
    assert kept == ["checkpoint.prev.pt", "checkpoint.pt"]
    assert json.loads((run / "metrics.json").read_text())["epochs"] == 3
