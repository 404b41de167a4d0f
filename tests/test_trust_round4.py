"""Nothing silently wrong, round 4: the faults a user met, each checked (issue items in comments)."""

import json
import shutil
from pathlib import Path

from autonorm.run import eval_cache
from autonorm.run.train import main as train_main
from core_fixtures import make_processed, run_config


# --------------------------------------------------------------------------- 2. the code fingerprint
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


# --------------------------------------------------------------------------- 5. the freeze effect
def _freeze_ctx(tmp_path, mean_s, mean_a, froze):
    import pandas as pd

    from autonorm.report.context import ReportContext
    from autonorm.report.sections import mechanism

    summary = pd.DataFrame([{"dataset": "cifar10", "method": m, "metric": "accuracy", "mean": v, "n": 3,
                             "standin": False} for m, v in (("autonorm_s", mean_s), ("autonorm", mean_a))])
    freeze = pd.DataFrame([{"dataset": "cifar10", "method": "autonorm_s", "seed": s, "froze": froze}
                           for s in range(3)])
    empty = pd.DataFrame()
    t = {"summary": summary, "freeze": freeze, "comparisons": empty, "runs": empty, "datasets": empty}
    return "\n".join(mechanism.freeze_effect(ReportContext(t=t, out=tmp_path / "r.md")))


def test_freeze_effect_of_exactly_zero_is_no_difference(tmp_path):
    text = _freeze_ctx(tmp_path, 85.0, 85.0, True)
    assert "no difference" in text and "opposite sign" not in text
    assert "opposite sign to the paper" in _freeze_ctx(tmp_path, 84.0, 85.0, True)
    assert "nothing froze" in _freeze_ctx(tmp_path, 85.0, 85.0, False)


# --------------------------------------------------------------------------- 3. one validation of a run's settings
import pytest  # noqa: E402


@pytest.mark.parametrize("eps_h, t_freeze, key", [(0.0, 1, "eps_h"), (10.0, 1, "eps_h"), (0.1, 9, "t_freeze")])
def test_training_entry_point_refuses_what_the_workflow_refuses(tmp_path, capsys, eps_h, t_freeze, key):
    """autonorm-train and the workflow's config check run one validation of the AutoNorm settings:
    eps_h 0 (always freezes), eps_h 10 (never freezes: above ln 2) and a t_freeze after the last
    epoch are refused by both, naming the key."""
    import copy

    import yaml

    from autonorm.config.run_config import ConfigError, run_settings_problems
    from autonorm.config.workflow import check_config

    data = make_processed(tmp_path / "data", "regression")
    cfg = run_config(data, tmp_path / "run", method="autonorm_s", epochs=2, eps_h=eps_h, t_freeze=t_freeze)
    assert [k for k, _ in run_settings_problems(cfg)] == [f"autonorm.{key}"]
    assert train_main(["--run-config", json.dumps(cfg), "--threads", "1"]) == 2
    assert f"run config key autonorm.{key}" in capsys.readouterr().err
    assert not (tmp_path / "run" / "metrics.json").exists()

    base = yaml.safe_load((Path(__file__).resolve().parents[1] / "workflow" / "presets" / "smoke.yaml").read_text())
    wf = yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text())
    wf.update(copy.deepcopy(base))
    wf["autonorm"] = dict(wf.get("autonorm") or {}, eps_h=eps_h if eps_h > 0 else 1e-9,
                          t_freeze=t_freeze if key == "t_freeze" else 1)
    if eps_h == 0:  # the schema refuses it (exclusiveMinimum 0), naming the key
        wf["autonorm"]["eps_h"] = 0.0
    with pytest.raises(ConfigError, match=rf"autonorm\.{key}"):
        check_config(wf)


def test_run_settings_of_a_good_run_pass():
    from autonorm.config.run_config import run_settings_problems

    cfg = run_config(Path("/nowhere"), Path("/nowhere/run"), method="autonorm_s", epochs=3, eps_h=0.1, t_freeze=2)
    assert run_settings_problems(cfg) == []
    assert run_settings_problems(dict(cfg, method="frozen_ln", autonorm=dict(cfg["autonorm"], eps_h=10))) == []


# --------------------------------------------------------------------------- 7. what reaches the console
def _snakemake(tmp_path, *args, timeout=240):
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "--configfile", "workflow/presets/smoke.yaml",
           "--config", f"results_dir={tmp_path / 'results'}", f"raw_dir={tmp_path / 'raw'}", *args]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout)


def test_a_failed_download_reaches_the_console_with_its_own_message(tmp_path):
    """Under the default profile: an offline download from an empty folder fails, and the console
    shows the job's own paragraph (the missing files, where to put them, --from), not only
    'a job failed'."""
    (tmp_path / "empty").mkdir()
    r = _snakemake(tmp_path, "datasets=[cifar10]", 'ablations={"datasets": [], "variants": []}',
                   f'raw_from={{"cifar10": "{tmp_path / "empty"}"}}', "--", "dataset_cifar10")
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "Dataset 'cifar10'" in out and "missing" in out, out[-3000:]
    assert "cifar-10-python.tar.gz" in out and "Failed: rule download; log " in out and "download/cifar10" in out
    assert "Logfile" not in out  # the job's message once, not Snakemake's whole-log dump as well


def test_a_long_failed_log_shows_its_last_lines(tmp_path, monkeypatch):
    """A training that failed after many epochs: its last lines (the traceback's message) reach the
    console, not every epoch before it; a short log is shown whole; a path with a space is kept."""
    from autonorm import console

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


def test_a_dry_run_lists_the_jobs_it_would_run(tmp_path):
    r = _snakemake(tmp_path, "datasets=[smoke_digits]", "methods=[frozen_ln,autonorm_s]", "seeds=[0]",
                   'ablations={"datasets": [], "variants": []}', "-n")
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout + r.stderr
    assert "rule train:" in out and "wildcards: dataset=smoke_digits, method=autonorm_s, seed=0" in out
    assert "rule preprocess:" in out


# --------------------------------------------------------------------------- 4. an unwritable results folder
def test_unwritable_results_folder_is_refused_in_one_paragraph(tmp_path):
    import subprocess

    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    (results / "runs" / "keep.json").write_text("{}")
    if subprocess.run(["chattr", "+i", str(results / "runs")], capture_output=True).returncode != 0:
        pytest.skip("chattr +i (an immutable folder, which stops root too) is not supported here")
    try:
        r = _snakemake(tmp_path, "datasets=[smoke_digits]", "methods=[frozen_ln,autonorm_s]", "seeds=[0]",
                       'ablations={"datasets": [], "variants": []}')
    finally:
        subprocess.run(["chattr", "-i", str(results / "runs")])
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert f"results folder {results / 'runs'} is not writable" in out, out[-2000:]
    assert "Traceback" not in out
    assert (results / "runs" / "keep.json").exists()
