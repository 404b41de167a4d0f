"""SST-2, PTB POS, Energy Efficiency and California Housing on fixture files in their real formats;
content verification, provenance, trivial baselines and processed-data integrity."""
import json
import tarfile

import numpy as np
import pytest
import torch

import helpers.raw_files as fx
from autonorm.data import DataCorruptError, DataMissingError, load_processed, nlp, registry, text
from autonorm.data.baselines import trivial_baseline
from autonorm.data.cli import main
from autonorm.data.pipeline import download, preprocess


def _sst2_official_counts(monkeypatch):
    """Make the fixture's row counts the 'official' ones, so content (not counts) decides."""
    monkeypatch.setattr(nlp, "SST2_EXPECTED_ROWS", {"train": len(fx.SST_TRAIN), "validation": len(fx.SST_DEV)})


@pytest.mark.parametrize("writer", [fx.write_sst2_tsv, fx.write_sst2_parquet])
def test_sst2_tsv_and_parquet(tmp_path, writer, monkeypatch):
    raw = tmp_path / "raw"
    writer(raw)
    _sst2_official_counts(monkeypatch)
    fx.patch_checksums(monkeypatch, "sst2", raw)  # TSV sha256s and canonical row hashes of the fixture
    download("sst2", raw)  # present -> verification only, marker written
    meta = preprocess("sst2", raw, tmp_path / "out", {"val_fraction": 0.2, "max_len": 8})
    ds = load_processed(tmp_path / "out")
    assert meta["task"] == "sequence_classification" and meta["sizes"] == {"train": 8, "val": 2, "test": 4}
    assert meta["itos"][:2] == ["<pad>", "<unk>"] and meta["pad_id"] == 0 and meta["unk_id"] == 1
    assert "n't" not in meta["itos"] and "'s" in meta["itos"]
    x, y = ds.split("test")
    assert x.dtype == torch.int64 and x.shape == (4, 8) and y.tolist() == [lab for _, lab in fx.SST_DEV]
    assert meta["truncated"]["train"] >= 1
    assert (x == 1).any()  # unseen test words -> <unk>
    prov = meta["provenance"]
    assert prov["status"] == "verified" and len(prov["files"]) == 2
    checks = " ".join(f["check"] for f in prov["files"])
    assert ("sha256 = GLUE" in checks) if writer is fx.write_sst2_tsv else ("content sha256" in checks)
    assert meta["trivial_baseline"]["name"] == "majority class"
    # train labels 5 x 1, 5 x 0 minus the holdout; test = 2 positive of 4: majority accuracy is 50 %
    assert meta["trivial_baseline"]["test"]["accuracy"] == pytest.approx(50.0)


def test_sst2_wrong_split_rejected_unless_allowed(tmp_path, capsys):
    raw = tmp_path / "raw"
    fx.write_sst2_tsv(raw)  # 10 / 4 rows: not GLUE's 67,349 / 872
    rc = main(["download", "--dataset", "sst2", "--raw-dir", str(raw)])
    err = capsys.readouterr().err
    assert rc == 2 and "10 rows" in err and "67,349" in err and "train.tsv" in err and "--allow-unverified" in err
    assert not (raw / "sst2" / ".complete").exists()
    assert main(["download", "--dataset", "sst2", "--raw-dir", str(raw), "--allow-unverified"]) == 0
    marker = json.loads((raw / "sst2" / ".complete").read_text())
    assert marker["provenance"]["status"] == "unverified"
    meta = preprocess("sst2", raw, tmp_path / "out", {"allow_unverified": True, "val_fraction": 0.2})
    assert meta["provenance"]["status"] == "unverified" and "67,349" in meta["provenance"]["note"]


def test_sst2_translated_copy_rejected(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    _sst2_official_counts(monkeypatch)
    fx.write_sst2_tsv(raw)
    fx.patch_checksums(monkeypatch, "sst2", raw)  # the English fixture is "official"
    translated = [("c'est un voyage charmant et souvent émouvant . ", 1)] + fx.SST_TRAIN[1:]
    fx.write_sst2_parquet(raw, train=translated)
    (raw / "sst2" / "SST-2" / "train.tsv").unlink()  # only the parquet copy is left
    with pytest.raises(DataCorruptError, match="translated"):
        preprocess("sst2", raw, tmp_path / "out")
    meta = preprocess("sst2", raw, tmp_path / "out", {"allow_unverified": True, "val_fraction": 0.2})
    assert meta["provenance"]["status"] == "unverified"
    assert [f["verified"] for f in meta["provenance"]["files"]] == [False, True]  # train flagged, dev fine


def test_tokenizer_keeps_non_ascii_letters(tmp_path, monkeypatch):
    assert text.tokenize_sst("The worst Clichés , a résumé does n't help") == [
        "the", "worst", "clichés", ",", "a", "résumé", "does", "n't", "help"]
    assert text.tokenize_sst("it's naïve—really") == ["it's", "naïve", "—", "really"]
    raw = tmp_path / "raw"
    fx.write_sst2_tsv(raw, train=fx.SST_TRAIN + [("the plot is nothing but boilerplate clichés ", 0)])
    meta = preprocess("sst2", raw, tmp_path / "out", {"allow_unverified": True, "val_fraction": 0.1})
    assert "clichés" in meta["itos"] and "clich" not in meta["itos"]

def test_sst2_bad_labels(tmp_path):
    raw = tmp_path / "raw"
    fx.write_sst2_tsv(raw, train=[("good", 3)] * 5)
    with pytest.raises(DataCorruptError, match="labels"):
        preprocess("sst2", raw, tmp_path / "out", {"allow_unverified": True})  # a format error is never allowed
    assert not (tmp_path / "out").exists()


def _treebank_zip(raw, n_files=20):
    """The fixture .mrg files packed like nltk_data's treebank.zip (treebank/combined/...)."""
    import shutil
    import zipfile
    d = fx.write_ptb_sample(raw, n_files=n_files)
    z = d.parent.parent / "treebank.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("treebank/combined/README", "fixture")
        for f in sorted(d.glob("*.mrg")):
            zf.write(f, f"treebank/combined/{f.name}")
        zf.writestr("treebank/parsed/wsj_0001.prd", "(not read)")
    shutil.rmtree(d.parent)
    return z


def test_ptb_nltk_sample_drops_traces(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_ptb_sample(raw, n_files=20)
    fx.patch_checksums(monkeypatch, "ptb_pos", raw)  # manifest hash of the fixture's .mrg files
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
    assert m["provenance"]["status"] == "verified"
    assert m["provenance"]["files"][0]["path"] == "nltk_data/corpora/treebank/combined"
    assert m["trivial_baseline"]["name"].startswith("most-frequent tag per word")


def test_ptb_zip_verified_and_extracted_folder_refreshed(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    z = _treebank_zip(raw)
    with pytest.raises(DataCorruptError, match="9da92d76c3666cfb6cddeaed0f7e86b344cce0f0928a286d439e555f19c37399"):
        preprocess("ptb_pos", raw, tmp_path / "out")  # fixture zip != NLTK's
    fx.patch_checksums(monkeypatch, "ptb_pos", raw)
    meta = preprocess("ptb_pos", raw, tmp_path / "out")
    assert [f["path"] for f in meta["provenance"]["files"]] == ["nltk_data/corpora/treebank.zip"]
    assert meta["provenance"]["status"] == "verified" and sum(meta["sizes"].values()) == 30
    combined = z.parent / "treebank" / "combined"
    (combined / "wsj_0001.mrg").write_text("( (S (NN edited) ))\n")  # a stale/edited extraction
    (combined / "wsj_0999.mrg").write_text("( (S (NN extra) ))\n")
    meta = preprocess("ptb_pos", raw, tmp_path / "out")
    assert not (combined / "wsj_0999.mrg").exists() and sum(meta["sizes"].values()) == 30  # re-extracted


def test_ptb_unverified_mrg_files(tmp_path):
    raw = tmp_path / "raw"
    fx.write_ptb_sample(raw, n_files=20)
    with pytest.raises(DataCorruptError, match="manifest sha256"):
        preprocess("ptb_pos", raw, tmp_path / "out")
    meta = preprocess("ptb_pos", raw, tmp_path / "out", {"allow_unverified": True})
    assert meta["provenance"]["status"] == "unverified"


def test_ptb_wsj_full_sections(tmp_path):
    raw = tmp_path / "raw"
    fx.write_wsj_full(raw)
    with pytest.raises(DataCorruptError, match="sentence counts"):  # not the standard split's counts
        preprocess("ptb_pos", raw, tmp_path / "out", {"ptb_source": "wsj_full"})
    meta = preprocess("ptb_pos", raw, tmp_path / "out", {"ptb_source": "wsj_full", "allow_unverified": True})
    assert meta["sizes"] == {"train": 6, "val": 3, "test": 3}  # sections 00,01 / 19 / 22, 3 sentences each
    assert meta["provenance"]["status"] == "unverified"


def test_ptb_missing(tmp_path, capsys):
    rc = main(["preprocess", "--dataset", "ptb_pos", "--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.split("Raw folder for")[0]
    assert rc == 2 and "wsj_0001.mrg" in err and not (tmp_path / "o").exists()
    assert err.count("treebank.zip") == 1 and "one of:" in err  # archive OR extracted files, once
    with pytest.raises(DataMissingError):
        preprocess("ptb_pos", tmp_path / "raw", tmp_path / "o", {"ptb_source": "wsj_full"})


@pytest.mark.parametrize("writer", [fx.write_energy_xlsx, fx.write_energy_csv])
def test_energy(tmp_path, writer, monkeypatch):
    raw = tmp_path / "raw"
    writer(raw)
    with pytest.raises(DataCorruptError, match="40 rows.*768"):
        preprocess("energy_efficiency", raw, tmp_path / "out")
    fx.patch_checksums(monkeypatch, "energy_efficiency", raw)  # content hash of the fixture table
    monkeypatch.setattr(registry, "CHECKSUMS", {**registry.CHECKSUMS, "energy_efficiency": {
        "ENB2012_data.xlsx": ("sha256", "0" * 64)}})  # xlsx bytes never match: content decides
    meta = preprocess("energy_efficiency", raw, tmp_path / "out")
    assert meta["provenance"]["status"] == "verified" and "content sha256" in meta["provenance"]["files"][0]["check"]
    ds = load_processed(tmp_path / "out")
    x, y = ds.split("train")
    assert x.dtype == torch.float32 and x.shape[1] == 8 and y.dtype == torch.float32
    assert np.allclose(x.mean(0).numpy(), 0, atol=1e-5)  # standardised with train stats
    df = fx.energy_frame(40)
    assert set(np.round(y.numpy(), 3)) <= set(np.round(df["Y1"].to_numpy(np.float32), 3))  # original units
    assert meta["target_name"] == "heating_load" and meta["sizes"] == {"train": 28, "val": 6, "test": 6}
    meta2 = preprocess("energy_efficiency", raw, tmp_path / "out2", {"target": "cooling_load"})
    assert meta2["target_column"] == "Y2"
    # train-mean predictor, scored on test, in target units
    ytr, yte = ds.split("train")[1].double(), ds.split("test")[1].double()
    err = yte - ytr.mean()
    base = meta["trivial_baseline"]
    assert base["name"] == "train-mean predictor"
    assert base["test"]["rmse"] == pytest.approx(float(err.pow(2).mean().sqrt()), rel=1e-5)
    assert base["test"]["mae"] == pytest.approx(float(err.abs().mean()), rel=1e-5)


def test_energy_wrong_columns(tmp_path):
    raw = tmp_path / "raw"
    (raw / "energy_efficiency").mkdir(parents=True)
    (raw / "energy_efficiency" / "ENB2012_data.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DataCorruptError, match="X1"):
        preprocess("energy_efficiency", raw, tmp_path / "out")


def _sklearn_derivation(statlib: np.ndarray):
    """scikit-learn's fetch_california_housing, step by step as written there (reference for our numpy code)."""
    cal = statlib[:, [8, 7, 2, 3, 4, 5, 6, 1, 0]]
    target, data = cal[:, 0].copy(), cal[:, 1:].copy()
    data[:, 2] /= data[:, 5]
    data[:, 3] /= data[:, 5]
    data[:, 5] = data[:, 4] / data[:, 5]
    return data, target / 100000.0


def test_california_columns_match_sklearn_definition():
    from autonorm.data.tabular import california_from_statlib
    row = np.array([[-122.23, 37.88, 41.0, 880.0, 129.0, 322.0, 126.0, 8.3252, 452600.0]])
    X, y = california_from_statlib(row)
    # by hand: MedInc, HouseAge, AveRooms=880/126, AveBedrms=129/126, Population, AveOccup=322/126, Lat, Lon
    assert np.allclose(X[0], [8.3252, 41.0, 880 / 126, 129 / 126, 322.0, 322 / 126, 37.88, -122.23])
    assert np.allclose(y, [4.526])
    rng = np.random.default_rng(0)
    many = np.abs(rng.normal(100, 30, (20, 9))) + 1
    Xs, ys = _sklearn_derivation(many)
    Xo, yo = california_from_statlib(many)
    assert np.allclose(Xo, Xs) and np.allclose(yo, ys)


def test_california_tgz_and_data_file(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    tgz = fx.write_cal_tgz(raw, n=50)
    with pytest.raises(DataCorruptError, match="aaa5c9a6afe2225cc2aed2723682ae403280c4a3695a2ddda4ffb5d8215ea681"):
        preprocess("california_housing", raw, tmp_path / "out")  # fixture != published sha256
    fx.patch_checksums(monkeypatch, "california_housing", raw)
    meta = preprocess("california_housing", raw, tmp_path / "out")
    assert meta["feature_names"][0] == "MedInc" and meta["sizes"] == {"train": 40, "val": 5, "test": 5}
    assert meta["provenance"]["status"] == "verified"
    assert not (raw / "california_housing" / "cal_housing_py3.pkz").exists()  # no pickle cache is written
    with tarfile.open(tgz) as tf:
        data = tf.extractfile("CaliforniaHousing/cal_housing.data").read()
    X, y = _sklearn_derivation(np.loadtxt(data.decode().splitlines(), delimiter=","))
    ds = load_processed(tmp_path / "out")
    tr = np.sort(np.random.default_rng(0).permutation(50)[10:])
    assert np.isclose(ds.meta["y_mean"], y[tr].mean(), rtol=1e-6)
    assert np.allclose(ds.meta["feature_mean"], X[tr].mean(0), rtol=1e-6)
    # the data file alone (what is inside the archive), verified by its own sha256
    tgz.unlink()
    (raw / "california_housing" / "cal_housing.data").write_bytes(data)
    with pytest.raises(DataCorruptError, match="d3d8a1a722ae78f91134862727d27a70b1415e7d512a89140406248687f4b902"):
        preprocess("california_housing", raw, tmp_path / "out2")
    monkeypatch.setitem(registry.CHECKSUMS["california_housing"], "cal_housing.data",
                        ("sha256", fx.sha256(raw / "california_housing" / "cal_housing.data")))
    meta2 = preprocess("california_housing", raw, tmp_path / "out2")
    assert meta2["provenance"]["files"][0]["path"] == "cal_housing.data"
    assert meta2["y_mean"] == pytest.approx(meta["y_mean"])


class _Exploit:
    """Unpickling this creates a file: proof that a .pkz was loaded."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_crafted_pkz_is_never_unpickled(tmp_path, monkeypatch, capsys):
    raw = tmp_path / "raw"
    proof = tmp_path / "pwned"
    d = raw / "california_housing"
    d.mkdir(parents=True)
    import joblib
    joblib.dump(_Exploit(proof), d / "cal_housing_py3.pkz", compress=6)
    rc = main(["preprocess", "--dataset", "california_housing", "--raw-dir", str(raw), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "cal_housing_py3.pkz" in err and "never read" in err and "cal_housing.tgz" in err
    fx.write_cal_tgz(raw, n=50)  # with the archive beside it, still only the archive is read
    fx.patch_checksums(monkeypatch, "california_housing", raw)
    assert main(["download", "--dataset", "california_housing", "--raw-dir", str(raw)]) == 0
    preprocess("california_housing", raw, tmp_path / "o")
    assert not proof.exists()
    joblib.load(d / "cal_housing_py3.pkz")  # the fixture really is an exploit: loading it creates the file
    assert proof.exists()


def test_trivial_baselines_hand_computed():
    meta_c = {"num_classes": 3}
    y_tr = np.array([2, 2, 1, 0, 2])  # majority 2
    y_te = np.array([2, 0, 2, 1])
    b = trivial_baseline("sequence_classification", (None, y_tr), (None, y_te), meta_c)
    assert b["test"]["accuracy"] == pytest.approx(50.0)  # 2 of 4
    # macro F1 over classes present: class 2 precision 2/4, recall 1 -> F1 2/3; classes 0, 1: 0
    assert b["test"]["f1_macro"] == pytest.approx(100 * (2 / 3) / 3)
    # tagging: word 5 -> tag 0 (2 of 3), word 6 -> tag 1; <unk> (1) and unseen word 7 -> overall majority tag 0
    x_tr = np.array([[5, 5, 6, 0], [5, 6, 6, 0]])
    t_tr = np.array([[0, 0, 1, -100], [1, 1, 0, -100]])
    x_te = np.array([[5, 6, 1, 7, 0]])
    t_te = np.array([[0, 0, 0, 1, -100]])
    b = trivial_baseline("token_classification", (x_tr, t_tr), (x_te, t_te), {"num_tags": 2, "unk_id": 1})
    assert b["test"]["accuracy"] == pytest.approx(50.0)  # predictions 0, 1, 0, 0 vs 0, 0, 0, 1
    b = trivial_baseline("regression", (None, np.array([1.0, 2.0, 6.0])), (None, np.array([3.0, 5.0])), {})
    assert b["test"]["rmse"] == pytest.approx(np.sqrt((0 + 4) / 2)) and b["test"]["mae"] == pytest.approx(1.0)


def _processed_energy(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_energy_csv(raw)
    fx.patch_checksums(monkeypatch, "energy_efficiency", raw)
    preprocess("energy_efficiency", raw, tmp_path / "out")
    return tmp_path / "out"


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_processed_split_damage_is_a_named_error(tmp_path, monkeypatch, damage):
    out = _processed_energy(tmp_path, monkeypatch)
    meta = json.loads((out / "meta.json").read_text())
    rec = meta["split_files"]["train"]
    assert rec["sha256"] == fx.sha256(out / "train.pt") and rec["x"]["shape"] == [28, 8]
    f = out / "train.pt"
    data = bytearray(f.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 3]
    else:
        data = bytearray(b"\xff\xfe garbage " * 50)
    f.write_bytes(bytes(data))
    with pytest.raises(DataCorruptError) as ei:
        load_processed(out).split("train")
    msg = str(ei.value)
    assert str(f.resolve()) in msg and "rerun preprocess" in msg and "snakemake --forcerun preprocess" in msg
    assert load_processed(out).split("test")[0].shape == (6, 8)  # other splits still load


def test_processed_load_checks_labels_and_shapes(tmp_path, monkeypatch):
    out = _processed_energy(tmp_path, monkeypatch)
    meta = json.loads((out / "meta.json").read_text())
    meta.pop("split_files")  # a hand-made/legacy folder: no checksums, structure still checked
    obj = torch.load(out / "val.pt", weights_only=True)
    obj["y"][0] = float("nan")
    torch.save(obj, out / "val.pt")
    (out / "meta.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match="no checksums"):
        with pytest.raises(DataCorruptError, match="non-finite regression targets"):
            load_processed(out).split("val")
    meta["num_features"] = 9
    (out / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataCorruptError, match="8 features"):
        load_processed(out).split("test")
    # classification labels beyond num_classes
    from autonorm.data.storage import check_split_tensors
    m = {"task": "sequence_classification", "num_classes": 2, "vocab_size": 10, "sizes": {"train": 2}}
    assert "outside 0..1" in check_split_tensors(m, "train", torch.ones(2, 3, dtype=torch.int64), torch.tensor([0, 2]))
    assert "vocabulary" in check_split_tensors(m, "train", torch.full((2, 3), 10), torch.tensor([0, 1]))
    mt = {"task": "token_classification", "num_tags": 3, "sizes": {"train": 1}}
    assert check_split_tensors(mt, "train", torch.ones(1, 3, dtype=torch.int64), torch.tensor([[0, 2, -100]])) == ""
    assert "tag ids" in check_split_tensors(mt, "train", torch.ones(1, 3, dtype=torch.int64), torch.tensor([[0, 3, -100]]))
    m3 = dict(m, sizes={"train": 3})
    assert "2 examples" in check_split_tensors(m3, "train", torch.ones(2, 3, dtype=torch.int64), torch.tensor([0, 1]))


def test_california_missing(tmp_path, capsys):
    rc = main(["preprocess", "--dataset", "california_housing", "--raw-dir", str(tmp_path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "cal_housing.tgz" in err and "sha256 aaa5c9a6" in err


def test_download_from_a_colleagues_copy(tmp_path, monkeypatch):
    """--from finds each dataset's accepted files in a nested folder and lays them out like download."""
    import shutil
    import zipfile
    staging = tmp_path / "staging"
    fx.write_sst2_tsv(staging)
    _treebank_zip(staging)
    fx.write_energy_xlsx(staging)
    fx.write_cal_tgz(staging)
    copy = tmp_path / "copy"
    shutil.copytree(staging / "sst2" / "SST-2", copy / "glue" / "SST-2")
    shutil.copy(staging / "ptb_pos" / "nltk_data" / "corpora" / "treebank.zip", copy / "treebank.zip")
    (copy / "uci").mkdir()
    with zipfile.ZipFile(copy / "uci" / "energy+efficiency.zip", "w") as zf:  # the UCI zip form
        zf.write(staging / "energy_efficiency" / "ENB2012_data.xlsx", "ENB2012_data.xlsx")
    shutil.copy(staging / "california_housing" / "cal_housing.tgz", copy / "uci" / "cal_housing.tgz")
    for name in ("sst2", "ptb_pos", "energy_efficiency", "california_housing"):
        fx.patch_checksums(monkeypatch, name, staging)
    monkeypatch.setitem(registry.CHECKSUMS, "energy_efficiency", {
        "ENB2012_data.xlsx": ("sha256", fx.sha256(staging / "energy_efficiency" / "ENB2012_data.xlsx"))})
    _sst2_official_counts(monkeypatch)
    raw = tmp_path / "raw"
    (raw / "energy_efficiency").mkdir(parents=True)
    (raw / "energy_efficiency" / "ENB2012_data.csv").write_text("stale,form\n")  # would shadow the zip
    expected = {"sst2": ["SST-2/train.tsv", "SST-2/dev.tsv"], "ptb_pos": ["nltk_data/corpora/treebank.zip"],
                "energy_efficiency": ["energy+efficiency.zip"], "california_housing": ["cal_housing.tgz"]}
    for name, copied in expected.items():
        assert main(["download", "--dataset", name, "--raw-dir", str(raw), "--from", str(copy)]) == 0
        marker = json.loads((raw / name / ".complete").read_text())
        assert marker["copied"] == copied and marker["provenance"]["status"] == "verified", name
    assert not (raw / "energy_efficiency" / "ENB2012_data.csv").exists()
    meta = preprocess("energy_efficiency", raw, tmp_path / "e")
    assert "inside the zip" in meta["provenance"]["files"][0]["check"]
    meta = preprocess("sst2", raw, tmp_path / "s", {"val_fraction": 0.2, "max_train": 5})
    assert meta["sizes"] == {"train": 5, "val": 2, "test": 4} and "max_train" in meta["split_note"]


def test_unknown_word_signatures_by_hand():
    from autonorm.data.text import build_token_classification, unk_signature
    assert unk_signature("Reorganizing") == "<unk-cap-ing>"
    assert unk_signature("1987-88") == "<unk-num-hyph>"
    assert unk_signature("quickly") == "<unk-ly>"
    assert unk_signature("Smith") == "<unk-cap>"
    assert unk_signature("is") == "<unk>"  # a suffix needs a stem of 2+ letters before it
    train = [[("the", "DT"), ("dog", "NN"), ("barked", "VBD")], [("the", "DT"), ("dog", "NN"), ("ran", "VBD")]]
    test = [[("the", "DT"), ("cat", "NN"), ("jumped", "VBD")]]
    opts = {"max_len": 4, "min_freq": 2, "unk_signatures": True}
    meta, out = build_token_classification("ptb_pos", {"train": train, "val": test, "test": test}, opts)
    itos = meta["itos"]
    # min_freq 2 keeps "the" and "dog"; the singletons "barked", "ran" become their signatures
    assert itos == ["<pad>", "<unk>", "dog", "the", "<unk-ed>"]  # "ran" has no signature: it is <unk>
    x_test = out["test"][0][0].tolist()
    assert x_test == [itos.index("the"), 1, itos.index("<unk-ed>"), 0]  # "cat": no signature -> <unk>
    # the trivial baseline stays per word: "cat" and "jumped" are unknown -> most frequent tag (DT/NN tie
    # broken by the lowest id); only "the" is scored by its own tag
    assert meta["trivial_baseline"]["name"].startswith("most-frequent tag per word")


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
