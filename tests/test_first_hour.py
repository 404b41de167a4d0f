"""What a new user meets first: every missing dataset named at once, CIFAR's missing files said as
one choice, and split descriptions that come from the split as built.
"""
from __future__ import annotations

import pytest


def test_offline_cifar_names_the_archive_or_the_folder_as_one_choice(tmp_path, monkeypatch):
    from autonorm.data import integrity, vision
    from autonorm.data.errors import DataMissingError

    monkeypatch.setattr(integrity, "host_reachable", lambda *a, **k: False)
    with pytest.raises(DataMissingError) as e:
        vision.download("cifar10", tmp_path)
    text = str(e.value)
    assert "one of:" in text and "cifar-10-python.tar.gz" in text and "cifar-10-batches-py" in text
    assert text.count("\n  - ") == 1  # one item, not the archive and every batch file


def test_the_default_profile_keeps_going_so_every_missing_dataset_is_named():
    from pathlib import Path

    import yaml

    prof = yaml.safe_load((Path(__file__).resolve().parents[1] / "profiles" / "default" / "config.yaml").read_text())
    assert prof.get("keep-going") is True and "printshellcmds" not in prof


def test_smoke_digits_split_note_comes_from_the_split_as_built():
    from autonorm.data import smoke

    meta, splits = smoke.preprocess_smoke_digits({"val_fraction": 0.15, "test_fraction": 0.2, "split_seed": 0})
    n = [len(splits[k][1]) for k in ("train", "val", "test")]
    pct = "/".join(str(round(100 * k / sum(n))) for k in n)
    assert pct == "65/15/20" and meta["split_note"].startswith(f"seeded {pct} split")
    assert "70/10/20" not in meta["description"] + meta["split_note"]
