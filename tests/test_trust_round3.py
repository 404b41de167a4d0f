"""Nothing silently wrong, round 3: damaged run files, code edited during a run, errors a person
can read, and the small faults of the data layer (docs: README "Exit codes", docs/data.md).

Why: each of these once gave a number or a state that looked right and was not (a damaged
model evaluated to 32% without a word; an evaluation made by code that no longer existed;
a "verified" marker beside files that no longer verified), or a traceback where a user needed
one sentence.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
import torch

from autonorm.analysis import aggregate
from autonorm import cli, report
from autonorm.run import eval_cache, evaluate, export
from autonorm.report import figures
from autonorm.run import checkpoint as ckpt_io
from autonorm.run import train as train_mod
from autonorm.io_utils import WriteFailed
from autonorm.layers.norms import NormSelector
from autonorm.run.train import main as train_main
from core_fixtures import make_processed, run_config

ROOT = Path(__file__).resolve().parents[1]


def _trained(tmp_path, task="image_classification", **kw):
    data = make_processed(tmp_path / "data", task)
    run = tmp_path / "run"
    cfg = run_config(data, run, epochs=2, **kw)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0
    return data, run, cfg


def _flip_bytes(path: Path, n: int = 8) -> None:
    """Flip n bytes in the middle of a file (inside a tensor's storage: torch.load still reads it)."""
    raw = bytearray(path.read_bytes())
    mid = len(raw) // 2
    for i in range(mid, mid + n):
        raw[i] ^= 0xFF
    path.write_bytes(bytes(raw))


# --------------------------------------------------------------------------- 1. damaged model.pt
def test_a_damaged_model_is_refused_by_every_reader(tmp_path, capsys):
    data, run, _ = _trained(tmp_path)
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
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1", "--stop-after-epochs", "2"]) == 0
    _flip_bytes(run / ckpt_io.CHECKPOINT)
    ckpt = ckpt_io.load_checkpoint(run, torch.device("cpu"), train_mod.run_config_hash(cfg))
    assert ckpt is not None and ckpt["epoch"] == 1  # the previous, intact one
    kept = list((run / ckpt_io.DAMAGED_DIR).iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("checkpoint.pt.")
    assert "sha256 is not one recorded" in caplog.text


# --------------------------------------------------------------------------- 7. both unreadable: kept
def test_both_damaged_checkpoints_are_kept_for_inspection(tmp_path):
    data = make_processed(tmp_path / "data", "regression")
    run = tmp_path / "run"
    cfg = run_config(data, run, epochs=3)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1", "--stop-after-epochs", "2"]) == 0
    for name in (ckpt_io.CHECKPOINT, ckpt_io.PREVIOUS):
        (run / name).write_bytes(b"not a checkpoint")
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0  # starts afresh
    kept = sorted(p.name.split(".20")[0] for p in (run / ckpt_io.DAMAGED_DIR).iterdir())
    assert kept == ["checkpoint.prev.pt", "checkpoint.pt"]
    assert json.loads((run / "metrics.json").read_text())["epochs"] == 3


# --------------------------------------------------------------------------- 2. code edited mid-run
def _package_copy(tmp_path, monkeypatch) -> Path:
    copy = tmp_path / "pkg"
    shutil.copytree(eval_cache.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(eval_cache, "PACKAGE_ROOT", copy)
    return copy


def test_source_edited_during_a_run_stores_no_evaluation(tmp_path, monkeypatch, caplog):
    copy = _package_copy(tmp_path, monkeypatch)
    real_finish = train_mod._finish

    def finish_after_an_edit(*a, **k):  # someone saves metrics.py while the run trains
        (copy / "metrics.py").write_text((copy / "metrics.py").read_text() + "\n# edited\n")
        return real_finish(*a, **k)

    monkeypatch.setattr(train_mod, "_finish", finish_after_an_edit)
    _, run, _ = _trained(tmp_path)
    assert not (run / eval_cache.PRECOMPUTED).exists()
    assert "changed while the training process ran" in caplog.text


def test_the_fingerprint_covers_every_folder_of_the_package(tmp_path, monkeypatch):
    """The whole package, not the folder eval_cache sits in: an edited norm is other code too."""
    copy = _package_copy(tmp_path, monkeypatch)
    assert (copy / "methods.py").is_file() and (copy / "layers" / "norms.py").is_file()
    before = eval_cache.fingerprint_on_disk()
    (copy / "layers" / "norms.py").write_text((copy / "layers" / "norms.py").read_text() + "\n# edited\n")
    assert eval_cache.fingerprint_on_disk() != before


def test_unedited_source_stores_the_evaluation(tmp_path, monkeypatch):
    _package_copy(tmp_path, monkeypatch)
    _, run, _ = _trained(tmp_path)
    assert (run / eval_cache.PRECOMPUTED).exists()


def test_fingerprint_is_the_code_at_process_start(tmp_path, monkeypatch):
    copy = _package_copy(tmp_path, monkeypatch)
    pinned = eval_cache.pin_code_fingerprint()
    (copy / "metrics.py").write_text("# edited\n")
    assert eval_cache.code_fingerprint() == pinned != eval_cache.fingerprint_on_disk()


# --------------------------------------------------------------------------- 3. readable errors
def test_corrupt_processed_split_is_one_paragraph(tmp_path, capsys):
    data, run, _ = _trained(tmp_path)
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
    from autonorm.io_utils import DamagedRunFile
    from autonorm.run.runlock import RunFolderBusy

    assert cli.explain(DamagedRunFile("x"))[0] == cli.EXIT_DAMAGED
    assert cli.explain(DataCorruptError("x"))[0] == cli.EXIT_DAMAGED
    assert cli.explain(DataMissingError("x"))[0] == cli.EXIT_MISSING
    assert cli.explain(FileNotFoundError(errno.ENOENT, "No such file", "/a/b"))[0] == cli.EXIT_MISSING
    assert cli.explain(RunFolderBusy("x"))[0] == cli.EXIT_BUSY
    assert cli.explain(OSError(errno.ENOSPC, "No space", "/a"))[0] == cli.EXIT_WRITE
    code, text = cli.explain(ZeroDivisionError("boom"))
    assert code == cli.EXIT_BUG and "--debug" in text


# --------------------------------------------------------------------------- 4. --from symlink loop
def test_from_folder_with_a_symlink_loop_returns(tmp_path):
    from autonorm.data import local_source

    src = tmp_path / "mirror"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "f.txt").write_text("x")
    os.symlink(".", src / "again")
    os.symlink("..", src / "sub" / "up")
    ix = local_source.Index(src)  # never returns on the old code
    assert [p.name for p in ix.files["f.txt"]] == ["f.txt"] and len(ix.files["f.txt"]) == 1


# --------------------------------------------------------------------------- 5. checks before any job
def test_patch_size_and_variant_eps_h_are_checked_before_any_job():
    from autonorm.config.workflow import ConfigError, check_config, load_config

    cfg = load_config(ROOT / "config.yaml")
    cfg["dataset_config"]["mnist"]["model"] = {"patch_size": 5}
    with pytest.raises(ConfigError, match=r"dataset_config.mnist.model.patch_size: patch_size=5 does not "
                                          r"divide the 28x28 images \(datasets mnist\)"):
        check_config(cfg)
    cfg = load_config(ROOT / "config.yaml")
    cfg["ablations"] = {"datasets": ["ptb_pos"], "variants": ["gate_3"]}
    cfg["variants"]["gate_3"]["autonorm"]["eps_h"] = 1.2
    cfg["autonorm"]["freeze"]["nlp"] = True
    with pytest.raises(ConfigError, match=r"variants.gate_3.autonorm.eps_h: eps_h=1.2 is not below ln 3"):
        check_config(cfg)


# --------------------------------------------------------------------------- 6. stale marker
def test_a_failed_verification_removes_the_verified_marker(tmp_path):
    from autonorm.data import pipeline
    from autonorm.data.errors import DataError

    raw = tmp_path / "raw"
    folder = raw / "energy_efficiency"
    folder.mkdir(parents=True)
    (folder / ".complete").write_text(json.dumps({"provenance": {"status": "verified"}}))
    (folder / "ENB2012_data.csv").write_text("X1,X2\n1,2\n")  # damaged: not the published table
    with pytest.raises(DataError):
        pipeline.download("energy_efficiency", raw, {})
    assert not (folder / ".complete").exists()


# --------------------------------------------------------------------------- 9. umask
def test_extracted_and_copied_raw_files_respect_the_umask(tmp_path):
    import gzip

    from autonorm.data import local_source, vision

    old = os.umask(0o022)
    try:
        src = tmp_path / "a.gz"
        with gzip.open(src, "wb") as fh:
            fh.write(b"abc")
        vision._extract_gz(src, tmp_path / "a")
        local_source._copy_file(src, tmp_path / "copy" / "a.gz")
    finally:
        os.umask(old)
    for p in (tmp_path / "a", tmp_path / "copy" / "a.gz"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p


# --------------------------------------------------------------------------- 10. hard gates, documented
def test_hard_gates_evaluate_with_soft_weights_as_documented():
    sel = NormSelector(8, 2, tau=0.5, hard=True)
    x = torch.randn(4, 3, 8)
    sel.eval()
    w = sel(x)
    assert not torch.all((w == 0) | (w == 1))  # soft
    assert torch.allclose(w, torch.softmax(sel.logits(x) / 0.5, -1))
    sel.train()
    w = sel(x).detach()  # straight-through one-hot in training
    assert torch.allclose(w, torch.nn.functional.one_hot(w.argmax(-1), 2).float(), atol=1e-6)
    sel.freeze()
    assert torch.allclose(sel(x), torch.softmax(sel.logits(x) / 0.5, -1))  # frozen: soft
    doc = (ROOT / "docs" / "method.md").read_text()
    assert "one-hot of the noise-free argmax" not in doc
    assert "a frozen hard selector" in doc and "evaluation uses the noise-free soft weights" in doc
