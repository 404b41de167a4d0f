"""A run's identity includes its data (docs/method.md "A run's identity"): after a finished run, a
changed data setting or a replaced raw file makes the rerun train from scratch (not resume the old
checkpoint), and the old model is never evaluated on the new data."""

import json

import pytest

from autonorm.data.pipeline import preprocess
from autonorm.run import evaluate
from autonorm.run.train import train_run
from helpers.tiny_runs import run_config
from helpers.raw_files import energy_frame


def _train_twice(tmp_path, dataset, raw, before, after, change_raw=None):
    data = tmp_path / "data" / dataset
    preprocess(dataset, raw, data, before)
    cfg = run_config(data, tmp_path / "run", method="frozen_ln", epochs=2)
    first = train_run(cfg)
    assert first is not None and json.loads((tmp_path / "run" / "env.json").read_text())["resumed_from_epoch"] is None
    if change_raw:
        change_raw()
    preprocess(dataset, raw, data, after)  # what Snakemake's rerun of preprocess does
    second = train_run(cfg)  # the same run config: only the data changed
    env = json.loads((tmp_path / "run" / "env.json").read_text())
    assert env["resumed_from_epoch"] is None, "the run resumed the checkpoint of the old data"
    model = json.loads((tmp_path / "run" / "model.json").read_text())
    assert env["data_identity"] == model["data_identity"] == second["data_identity"]
    assert second["data_identity"] != first["data_identity"]
    assert len(json.loads((tmp_path / "run" / "history.json").read_text())) == 2
    return first, second


@pytest.mark.parametrize("change", [{"split_seed": 1}, {"val_fraction": 0.2}, {"test_fraction": 0.3},
                                    {"max_train": 600}])
def test_changed_data_setting_trains_from_scratch(tmp_path, change):
    base = {"split_seed": 0, "val_fraction": 0.1, "test_fraction": 0.2}
    first, second = _train_twice(tmp_path, "smoke_digits", tmp_path / "raw", base, base | change)
    # new numbers: the model of the new data, on the new data
    assert (second["test"], second["val"]) != (first["test"], first["val"])
    if "max_train" in change:
        meta = json.loads((tmp_path / "data" / "smoke_digits" / "meta.json").read_text())
        assert meta["sizes"]["train"] == 600


def _energy_csv(raw, seed):
    d = raw / "energy_efficiency"
    d.mkdir(parents=True, exist_ok=True)
    energy_frame(60, seed=seed).to_csv(d / "ENB2012_data.csv", index=False)


@pytest.mark.parametrize("what", ["target", "raw_file"])
def test_changed_target_or_raw_file_trains_from_scratch(tmp_path, what):
    raw = tmp_path / "raw"
    _energy_csv(raw, seed=0)
    opts = {"allow_unverified": True, "target": "heating_load"}
    after = opts | {"target": "cooling_load"} if what == "target" else opts
    first, second = _train_twice(tmp_path, "energy_efficiency", raw, opts, after,
                                 change_raw=(lambda: _energy_csv(raw, seed=1)) if what == "raw_file" else None)
    assert second["test"] != first["test"]


def test_old_model_is_not_evaluated_on_new_data(tmp_path):
    data = tmp_path / "data" / "smoke_digits"
    preprocess("smoke_digits", tmp_path / "raw", data, {"split_seed": 0})
    run = tmp_path / "run"
    assert train_run(run_config(data, run, method="frozen_ln", epochs=1)) is not None
    args = ["--run-dir", str(run), "--data-dir", str(data), "--out", str(tmp_path / "e.json"),
            "--threads", "1", "--device", "cpu"]
    assert evaluate.main(args) == 0
    preprocess("smoke_digits", tmp_path / "raw", data, {"split_seed": 1})
    (tmp_path / "e.json").unlink()
    assert evaluate.main(args) == 2  # refused, naming the run and the data: retrain first
    assert not (tmp_path / "e.json").exists()
    with pytest.raises(evaluate.StaleRun, match="trained on other data"):
        evaluate.check_run_folder(run, None, data)


# --------------------------------------------------------------------------- every data key honoured or refused
def _write_raw(raw):
    import helpers.raw_files as fx

    fx.write_mnist(raw), fx.write_mnist(raw, "fashion_mnist"), fx.write_cifar10(raw), fx.write_cifar100(raw)
    fx.write_svhn(raw), fx.write_sst2_tsv(raw), fx.write_ptb_sample(raw), fx.write_energy_csv(raw)
    fx.write_cal_tgz(raw)


def _schema_data_keys():
    from autonorm.config.workflow import load_schema

    return sorted(load_schema()["$defs"]["data"]["properties"])


def test_every_dataset_declares_exactly_the_data_keys_its_builder_reads(tmp_path, monkeypatch):
    """Walks every registered dataset: the keys its builder reads are its declared data_keys, no
    more, no fewer (a key read is one the builder looks up; val_size wins over val_fraction)."""
    from autonorm.data import registry
    from autonorm.data.pipeline import options_read
    from helpers.raw_files import patch_checksums

    raw = tmp_path / "raw"
    _write_raw(raw)
    for name in registry.DATASETS:
        patch_checksums(monkeypatch, name, raw)
    keys = _schema_data_keys()
    for name, spec in registry.DATASETS.items():
        small = {"val_size": 5} if "val_size" in spec.defaults else {}  # the fixtures are small
        read = options_read(name, raw, {"allow_unverified": True, **small}) & set(keys)
        assert read <= set(spec.data_keys), f"{name} reads {sorted(read - set(spec.data_keys))} undeclared"
        undeclared_unread = set(spec.data_keys) - read
        assert not undeclared_unread, f"{name} declares {sorted(undeclared_unread)} but never reads them"
        assert set(spec.data_keys) <= set(keys), f"{name} declares keys the config schema does not know"


def test_every_data_key_not_read_by_a_dataset_is_refused_before_any_job():
    """Every schema data key over every registered dataset: accepted where the dataset reads it,
    refused naming the key and the dataset where it does not."""
    import copy

    import yaml

    from autonorm.config.run_config import ConfigError
    from autonorm.config.workflow import check_config
    from autonorm.data import registry

    base = yaml.safe_load((__import__("pathlib").Path(__file__).resolve().parents[1] / "config.yaml").read_text())
    values = {"val_fraction": 0.2, "test_fraction": 0.2, "val_size": 10, "split_seed": 1, "max_len": 16,
              "min_freq": 2, "unk_signatures": True, "ptb_source": "nltk_sample", "target": "cooling_load",
              "n_train": 50, "n_val": 20, "n_test": 20, "n_sentences": 100, "max_train": 500,
              "allow_unverified": True}
    assert set(values) == set(_schema_data_keys()), "a new data key needs a value here"
    for name, spec in registry.DATASETS.items():
        for key, value in values.items():
            cfg = copy.deepcopy(base)
            cfg["datasets"] = [name]
            cfg["dataset_config"] = {name: {"family": spec.family, "data": {key: value}}}
            cfg["ablations"] = {"datasets": [], "variants": []}
            cfg["variants"] = {}
            if key in spec.data_keys:
                check_config(cfg)
            else:
                with pytest.raises(ConfigError, match=rf"dataset_config\.{name}\.data\.{key}: dataset {name} "
                                                      rf"does not read"):
                    check_config(cfg)


@pytest.mark.parametrize("dataset", ["smoke_pos", "smoke_sentiment", "smoke_shapes32", "smoke_diabetes",
                                     "energy_efficiency", "ptb_pos"])
def test_max_train_is_honoured(tmp_path, dataset, monkeypatch):
    import helpers.raw_files as fx
    from autonorm.data.pipeline import build

    raw = tmp_path / "raw"
    fx.write_energy_csv(raw), fx.write_ptb_sample(raw)
    fx.patch_checksums(monkeypatch, dataset, raw)
    opts = {"allow_unverified": True} if dataset in ("energy_efficiency", "ptb_pos") else {}
    full, _ = build(dataset, raw, opts)
    meta, splits = build(dataset, raw, opts | {"max_train": 10})
    assert full["sizes"]["train"] > 10 and meta["sizes"]["train"] == 10 == len(splits["train"][1])
    assert meta["sizes"]["test"] == full["sizes"]["test"]  # the subset is of the training split only
    assert "max_train" in meta["split_note"]
