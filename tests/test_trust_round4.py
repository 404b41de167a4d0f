"""Nothing silently wrong, round 4: the faults a user met, each checked (issue items in comments)."""

import json
import shutil

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
