"""SST-2, PTB POS, Energy Efficiency and California Housing on fixture files in their real formats."""
import numpy as np
import pytest
import torch

import fixtures_data as fx
from autonorm.data import DataCorruptError, DataMissingError, load_processed
from autonorm.data.cli import main
from autonorm.data.pipeline import download, preprocess


@pytest.mark.parametrize("writer", [fx.write_sst2_tsv, fx.write_sst2_parquet])
def test_sst2_tsv_and_parquet(tmp_path, writer):
    raw = tmp_path / "raw"
    writer(raw)
    download("sst2", raw)  # present -> format check only, marker written
    meta = preprocess("sst2", raw, tmp_path / "out", {"val_fraction": 0.2, "max_len": 8})
    ds = load_processed(tmp_path / "out")
    assert meta["task"] == "sequence_classification" and meta["sizes"] == {"train": 8, "val": 2, "test": 4}
    assert meta["itos"][:2] == ["<pad>", "<unk>"] and meta["pad_id"] == 0 and meta["unk_id"] == 1
    assert "n't" not in meta["itos"] and "'s" in meta["itos"]
    x, y = ds.split("test")
    assert x.dtype == torch.int64 and x.shape == (4, 8) and y.tolist() == [l for _, l in fx.SST_DEV]
    assert meta["truncated"]["train"] >= 1
    assert (x == 1).any()  # unseen test words -> <unk>


def test_sst2_bad_labels(tmp_path):
    raw = tmp_path / "raw"
    fx.write_sst2_tsv(raw, train=[("good", 3)] * 5)
    with pytest.raises(DataCorruptError):
        preprocess("sst2", raw, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_ptb_nltk_sample_drops_traces(tmp_path):
    raw = tmp_path / "raw"
    fx.write_ptb_sample(raw, n_files=20)
    assert main(["preprocess", "--dataset", "ptb_pos", "--raw-dir", str(raw), "--out", str(tmp_path / "out"),
                 "--options-json", '{"max_len": 16}']) == 0
    ds = load_processed(tmp_path / "out")
    m = ds.meta
    assert m["task"] == "token_classification" and "-NONE-" not in m["tag_names"]
    assert "Vinken" in m["itos"]  # case kept as in the treebank
    assert sum(m["sizes"].values()) == 30  # 10 files x 2 sentences + 10 files x 1 sentence
    x, y = ds.split("train")
    assert x.shape[1] == 16 and ((x == 0) == (y == -100)).all()
    assert m["num_tags"] == len(m["tag_names"]) and int(y.max()) < m["num_tags"]


def test_ptb_wsj_full_sections(tmp_path):
    raw = tmp_path / "raw"
    fx.write_wsj_full(raw)
    meta = preprocess("ptb_pos", raw, tmp_path / "out", {"ptb_source": "wsj_full"})
    assert meta["sizes"] == {"train": 6, "val": 3, "test": 3}  # sections 00,01 / 19 / 22, 3 sentences each


def test_ptb_missing(tmp_path, capsys):
    rc = main(["preprocess", "--dataset", "ptb_pos", "--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "o")])
    assert rc == 2 and "wsj_0001.mrg" in capsys.readouterr().err and not (tmp_path / "o").exists()
    with pytest.raises(DataMissingError):
        preprocess("ptb_pos", tmp_path / "raw", tmp_path / "o", {"ptb_source": "wsj_full"})


@pytest.mark.parametrize("writer", [fx.write_energy_xlsx, fx.write_energy_csv])
def test_energy(tmp_path, writer):
    raw = tmp_path / "raw"
    writer(raw)
    meta = preprocess("energy_efficiency", raw, tmp_path / "out")
    ds = load_processed(tmp_path / "out")
    x, y = ds.split("train")
    assert x.dtype == torch.float32 and x.shape[1] == 8 and y.dtype == torch.float32
    assert np.allclose(x.mean(0).numpy(), 0, atol=1e-5)  # standardised with train stats
    df = fx.energy_frame(40)
    assert set(np.round(y.numpy(), 3)) <= set(np.round(df["Y1"].to_numpy(np.float32), 3))  # original units
    assert meta["target_name"] == "heating_load" and meta["sizes"] == {"train": 28, "val": 6, "test": 6}
    meta2 = preprocess("energy_efficiency", raw, tmp_path / "out2", {"target": "cooling_load"})
    assert meta2["target_column"] == "Y2"


def test_energy_wrong_columns(tmp_path):
    raw = tmp_path / "raw"
    (raw / "energy_efficiency").mkdir(parents=True)
    (raw / "energy_efficiency" / "ENB2012_data.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DataCorruptError, match="X1"):
        preprocess("energy_efficiency", raw, tmp_path / "out")


def test_california_tgz_then_sklearn_cache(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_cal_tgz(raw, n=50)
    with pytest.raises(DataCorruptError, match="aaa5c9a6afe2225cc2aed2723682ae403280c4a3695a2ddda4ffb5d8215ea681"):
        preprocess("california_housing", raw, tmp_path / "out")  # fixture != published sha256
    assert not (raw / "california_housing" / "cal_housing_py3.pkz").exists()
    fx.patch_checksums(monkeypatch, "california_housing", raw)
    meta = preprocess("california_housing", raw, tmp_path / "out")
    assert (raw / "california_housing" / "cal_housing_py3.pkz").is_file()  # sklearn's own cache format
    assert meta["feature_names"][0] == "MedInc" and meta["sizes"] == {"train": 40, "val": 5, "test": 5}
    from sklearn.datasets import fetch_california_housing
    X, yy = fetch_california_housing(data_home=str(raw / "california_housing"), download_if_missing=False,
                                     return_X_y=True)
    ds = load_processed(tmp_path / "out")
    assert np.isclose(ds.meta["y_mean"], yy[np.sort(np.random.default_rng(0).permutation(50)[10:])].mean(), rtol=1e-5)
    (raw / "california_housing" / "cal_housing.tgz").unlink()  # the cache alone is enough
    preprocess("california_housing", raw, tmp_path / "out2")


def test_california_missing(tmp_path, capsys):
    rc = main(["preprocess", "--dataset", "california_housing", "--raw-dir", str(tmp_path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "cal_housing.tgz" in err and "sha256 aaa5c9a6" in err
