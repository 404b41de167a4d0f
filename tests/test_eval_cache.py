"""Evaluation computed in the training process (autonorm.run.eval_cache): the evaluate job writes the
same bytes as a fresh evaluation, and evaluates from scratch whenever any input of the result
differs; none is stored when the package's code changed after it was imported (the code
fingerprint), since the evaluation would be of code that no longer exists."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autonorm.io_utils import sha256_file
from autonorm.run import eval_cache, evaluate
from autonorm.run import train as train_mod
from autonorm.run.train import main as train_main
from helpers.tiny_datasets import make_processed, rewrite_split
from helpers.tiny_runs import run_config, trained_run


def _train(tmp_path, task, name="run", *extra, **cfg_updates):
    data = make_processed(tmp_path / "data", task)
    cfg = run_config(data, tmp_path / name, method="autonorm_s", epochs=2)
    cfg.update(cfg_updates)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1", *extra]) == 0
    return data, tmp_path / name


def _eval(run, data, out, *extra):
    args = ["--run-dir", str(run), "--data-dir", str(data), "--out", str(out), "--threads", "1",
            "--device", "cpu", "--batch-size", "1000", *extra]
    assert evaluate.main(args) == 0
    return out.read_bytes()


@pytest.fixture
def count_evaluations(monkeypatch):
    calls = []
    real = evaluate.evaluate_run
    monkeypatch.setattr(evaluate, "evaluate_run", lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


@pytest.mark.parametrize("task", ["image_classification", "regression", "token_classification"])
def test_stored_evaluation_is_byte_identical_to_a_fresh_one(tmp_path, task, count_evaluations):
    data, run = _train(tmp_path, task)
    assert (run / eval_cache.PRECOMPUTED).exists()
    n_train = len(count_evaluations)  # the training process's own evaluation
    stored = _eval(run, data, tmp_path / "a.json")
    assert len(count_evaluations) == n_train, "the evaluate job evaluated again despite a matching key"
    fresh = _eval(run, data, tmp_path / "b.json", "--recompute")
    assert len(count_evaluations) == n_train + 1
    assert stored == fresh
    if task == "image_classification":
        assert json.loads(stored)["rotation"] is not None


def test_hit_path_does_not_import_torch(tmp_path):
    data, run = _train(tmp_path, "regression")
    code = ("import sys; from autonorm.run.evaluate import main; "
            f"rc = main(['--run-dir', {str(run)!r}, '--data-dir', {str(data)!r}, '--out', "
            f"{str(tmp_path / 'o.json')!r}, '--threads', '1', '--device', 'cpu']); "
            "sys.exit(3 if 'torch' in sys.modules else rc)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "using the evaluation its training process computed" in r.stdout
    assert json.loads((tmp_path / "o.json").read_text())["test"]


def _changed_model(run):
    """Other weights, as a retrain would leave them: model.pt and its recorded sha256."""
    sd = torch.load(run / "model.pt", weights_only=True)
    for v in sd.values():
        if v.is_floating_point():
            v.add_(0.5)
    torch.save(sd, run / "model.pt")
    info = json.loads((run / "model.json").read_text())
    info["sha256"]["model.pt"] = sha256_file(run / "model.pt")
    (run / "model.json").write_text(json.dumps(info))


@pytest.mark.parametrize("change", ["batch_size", "threads", "model", "code", "data_meta", "test_split",
                                    "device_auto_gpu", "corruptions"])
def test_any_changed_input_evaluates_from_scratch(tmp_path, change, monkeypatch, count_evaluations):
    data, run = _train(tmp_path, "image_classification")
    n = len(count_evaluations)
    extra = []
    if change == "batch_size":
        extra = ["--batch-size", "7"]
    elif change == "threads":
        extra = ["--threads", "2"]
    elif change == "model":
        _changed_model(run)
    elif change == "code":  # the source on disk differs from the training process's
        import autonorm

        monkeypatch.setattr(eval_cache, "fingerprint_on_disk", lambda: "edited")
        monkeypatch.setattr(autonorm, "CODE_AT_IMPORT", "edited")  # this process imported other code
        monkeypatch.setattr(eval_cache, "_CODE_FINGERPRINT", None)
    elif change == "data_meta":
        meta = json.loads((data / "meta.json").read_text())
        (data / "meta.json").write_text(json.dumps(meta | {"description": "other"}))
    elif change == "test_split":  # a rerun of preprocess: new split file and its record
        split = torch.load(data / "test.pt", weights_only=True)
        rewrite_split(data, "test", {"x": split["x"].flip(0), "y": split["y"]})
    elif change == "device_auto_gpu":
        monkeypatch.setattr(eval_cache, "accelerator_may_be_visible", lambda: True)
        extra = ["--device", "auto"]
    why = eval_cache.lookup(run, data, "somewhere" if change == "corruptions" else None,
                            "auto" if change == "device_auto_gpu" else "cpu",
                            7 if change == "batch_size" else 1000, 3, 2 if change == "threads" else 1)
    assert why[0] is None, f"{change}: the stored evaluation would be reused ({why[1]})"
    if change == "corruptions":
        return  # a corruption set needs a corruption folder; the key alone is the check here
    if change == "test_split":  # other data than the run was trained on: refused, not evaluated
        args = ["--run-dir", str(run), "--data-dir", str(data), "--out", str(tmp_path / "e.json"),
                "--threads", "1", "--device", "cpu"]
        assert evaluate.main(args) == 2 and not (tmp_path / "e.json").exists()
        return
    out = _eval(run, data, tmp_path / "e.json", *extra)
    assert len(count_evaluations) == n + 1, f"{change}: not evaluated from scratch"
    if change == "model":  # the stored numbers were of the old weights: they must not be the output
        assert json.loads(out)["test"] != json.loads((run / eval_cache.PRECOMPUTED).read_text())["result"]["test"]


def test_no_precompute_flag_and_a_retrain_leave_no_stale_file(tmp_path):
    data, run = _train(tmp_path, "regression")
    assert (run / eval_cache.PRECOMPUTED).exists()
    # the same folder retrained with another config, without the precompute: the old file is gone
    _train(tmp_path, "regression", "run", "--no-precompute-eval", seed=1)
    assert not (run / eval_cache.PRECOMPUTED).exists()


def test_key_hand_check(tmp_path):
    """The key holds each file's sha256 as `sha256sum` would print it."""
    import hashlib

    data, run = _train(tmp_path, "regression")
    key = json.loads((run / eval_cache.PRECOMPUTED).read_text())["key"]
    assert key["run_files"]["model.pt"] == hashlib.sha256((run / "model.pt").read_bytes()).hexdigest()
    assert key["data_meta"] == hashlib.sha256((data / "meta.json").read_bytes()).hexdigest()
    assert (key["device"], key["threads"], key["batch_size"], key["corruptions"]) == ("cpu", 1, 1000, None)


# --------------------------------------------------------------------------- a corruption set
def _corruption_set(data, root, name="tiny_c", seed=0):
    """A corruption set in the official CIFAR-10-C layout (NHWC uint8 per corruption, severity s in
    rows (s-1)*n .. s*n, labels.npy) beside the data, as the workflow lays it out."""
    import numpy as np

    from autonorm.data import CORRUPTIONS

    split = torch.load(data / "test.pt", weights_only=True)
    n = split["y"].shape[0]
    rng = np.random.default_rng(seed)
    d = root / "corruptions" / name
    d.mkdir(parents=True)
    base = split["x"].permute(0, 2, 3, 1).numpy()
    for c in CORRUPTIONS:
        noise = rng.integers(0, 40, size=(5 * n,) + base.shape[1:])
        np.save(d / f"{c}.npy", np.clip(np.tile(base, (5, 1, 1, 1)) + noise, 0, 255).astype(np.uint8))
    np.save(d / "labels.npy", np.tile(split["y"].numpy(), 5).astype(np.int64))
    meta_name = json.loads((data / "meta.json").read_text())["name"]
    (d / "meta.json").write_text(json.dumps({"name": name, "generated": True, "source": "test fixture",
                                             "corruptions": list(CORRUPTIONS), "severities": 5,
                                             "n_per_severity": int(n), "source_dataset": meta_name}))
    return d


def _train_with_set_beside(tmp_path):
    data = make_processed(tmp_path / "data", "image_classification")
    corr = _corruption_set(data, tmp_path)  # tmp_path/data/<task> and tmp_path/corruptions/<set>
    assert eval_cache.corruption_set_beside(data) == corr
    cfg = run_config(data, tmp_path / "run", method="autonorm_s", epochs=2)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0
    return data, corr, tmp_path / "run"


def test_a_corruption_set_already_built_is_evaluated_in_the_training_process(tmp_path, count_evaluations):
    data, corr, run = _train_with_set_beside(tmp_path)
    from autonorm.data import CORRUPTIONS

    key = json.loads((run / eval_cache.PRECOMPUTED).read_text())["key"]
    assert set(key["corruptions"]) == {"meta.json", "labels.npy"} | {f"{c}.npy" for c in CORRUPTIONS}
    n = len(count_evaluations)
    stored = _eval(run, data, tmp_path / "a.json", "--corruptions", str(corr))
    assert len(count_evaluations) == n, "the evaluate job evaluated again despite a matching key"
    fresh = _eval(run, data, tmp_path / "b.json", "--corruptions", str(corr), "--recompute")
    assert stored == fresh
    assert json.loads(stored)["corruption_summary"]["mean_all"] is not None
    # without --corruptions the stored result (which has them) is not what the job asks for
    _eval(run, data, tmp_path / "c.json")
    assert len(count_evaluations) == n + 2


def test_a_changed_corruption_file_evaluates_from_scratch(tmp_path, count_evaluations):
    import numpy as np

    data, corr, run = _train_with_set_beside(tmp_path)
    arr = np.load(corr / "brightness.npy")
    np.save(corr / "brightness.npy", 255 - arr)  # same shape and dtype, other images
    n = len(count_evaluations)
    out = json.loads(_eval(run, data, tmp_path / "a.json", "--corruptions", str(corr)))
    assert len(count_evaluations) == n + 1
    stored = json.loads((run / eval_cache.PRECOMPUTED).read_text())["result"]
    assert out["corruptions"]["brightness"] != stored["corruptions"]["brightness"]


def test_a_set_built_after_training_evaluates_from_scratch(tmp_path, count_evaluations):
    data, run = _train(tmp_path, "image_classification")
    assert json.loads((run / eval_cache.PRECOMPUTED).read_text())["key"]["corruptions"] is None
    corr = _corruption_set(data, tmp_path)
    n = len(count_evaluations)
    _eval(run, data, tmp_path / "a.json", "--corruptions", str(corr))
    assert len(count_evaluations) == n + 1


def test_nothing_is_stored_when_the_set_changes_while_the_training_process_evaluates(tmp_path, monkeypatch,
                                                                                    caplog):
    data = make_processed(tmp_path / "data", "image_classification")
    corr = _corruption_set(data, tmp_path)
    real = evaluate.evaluate_run

    def evaluate_while_the_set_is_rebuilt(*a, **k):
        result = real(*a, **k)
        _corruption_set(data, tmp_path / "rebuilt", seed=1)
        for f in (tmp_path / "rebuilt" / "corruptions" / "tiny_c").iterdir():
            f.replace(corr / f.name)
        return result

    monkeypatch.setattr(evaluate, "evaluate_run", evaluate_while_the_set_is_rebuilt)
    cfg = run_config(data, tmp_path / "run", method="autonorm_s", epochs=1)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0
    assert (tmp_path / "run" / "metrics.json").exists()
    assert not (tmp_path / "run" / eval_cache.PRECOMPUTED).exists()
    assert "changed while the training process ran" in caplog.text


def test_corruption_set_beside_needs_exactly_one_set_of_this_dataset(tmp_path):
    data = make_processed(tmp_path / "data", "image_classification")
    assert eval_cache.corruption_set_beside(data) is None  # no corruptions folder
    first = _corruption_set(data, tmp_path, "one")
    other = _corruption_set(data, tmp_path, "of_another_dataset")
    meta = json.loads((other / "meta.json").read_text())
    (other / "meta.json").write_text(json.dumps(meta | {"source_dataset": "mnist"}))
    assert eval_cache.corruption_set_beside(data) == first
    _corruption_set(data, tmp_path, ".two.tmp-x")  # being written (atomic_output_dir): not a set yet
    assert eval_cache.corruption_set_beside(data) == first
    _corruption_set(data, tmp_path, "two")
    assert eval_cache.corruption_set_beside(data) is None  # ambiguous: the training process skips it


# --------------------------------------------------------------------------- the code fingerprint: code edited during a run
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
    _, run, _ = trained_run(tmp_path)
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
    _, run, _ = trained_run(tmp_path)
    assert (run / eval_cache.PRECOMPUTED).exists()


def test_fingerprint_is_the_code_at_process_start(tmp_path, monkeypatch):
    copy = _package_copy(tmp_path, monkeypatch)
    pinned = eval_cache.pin_code_fingerprint()
    (copy / "metrics.py").write_text("# edited\n")
    assert eval_cache.code_fingerprint() == pinned != eval_cache.fingerprint_on_disk()


def test_source_edited_between_import_and_main_stores_no_evaluation(tmp_path, monkeypatch):
    """The fingerprint is the code as first imported: an edit after the import and before the
    entry point's main() starts is other code, and the training process stores no evaluation."""
    copy = tmp_path / "pkg"  # the package's source as imported (same bytes), then edited
    shutil.copytree(eval_cache.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(eval_cache, "PACKAGE_ROOT", copy)
    (copy / "metrics.py").write_text((copy / "metrics.py").read_text() + "\n# edited before main()\n")
    data = make_processed(tmp_path / "data", "regression")
    cfg = run_config(data, tmp_path / "run", method="frozen_ln", epochs=1)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0
    assert (tmp_path / "run" / "metrics.json").exists()
    assert not (tmp_path / "run" / eval_cache.PRECOMPUTED).exists()


def test_unedited_source_after_import_stores_the_evaluation(tmp_path, monkeypatch):
    copy = tmp_path / "pkg"
    shutil.copytree(eval_cache.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(eval_cache, "PACKAGE_ROOT", copy)
    data = make_processed(tmp_path / "data", "regression")
    cfg = run_config(data, tmp_path / "run", method="frozen_ln", epochs=1)
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 0
    assert (tmp_path / "run" / eval_cache.PRECOMPUTED).exists()
    env = json.loads((tmp_path / "run" / "env.json").read_text())
    import autonorm
    assert env["training_code"] == autonorm.TRAINING_CODE_AT_IMPORT
