"""The real datasets, end to end through the data layer: download --from, verify, preprocess, load.

Inputs: the shared folder of real files (``AUTONORM_SHARED_DATA``, or ``shared/data`` beside the
repository checkout) with MNIST, the NLTK treebank sample, GLUE SST-2, UCI Energy and California
Housing; Fashion-MNIST from Debian's ``dataset-fashion-mnist`` (/usr/share/datasets/fashion-mnist).
Each part skips with a printed reason when its folder is absent.  Vision sets use ``max_train`` to
keep the test to about a minute; the facts asserted are those of the real releases.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import torch

from autonorm.data import load_processed
from autonorm.data.cli import main

pytestmark = pytest.mark.dag  # real-data pipelines (download, verify, preprocess the real files)

SHARED = Path(os.environ.get("AUTONORM_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
DEBIAN_FASHION = Path("/usr/share/datasets/fashion-mnist")
SHARED_SETS = ["mnist", "ptb_pos", "sst2", "energy_efficiency", "california_housing"]
OPTIONS = {"mnist": {"max_train": 12000}, "fashion_mnist": {"max_train": 12000}}
TIMINGS: dict = {}


def _source(dataset: str) -> Path:
    src = DEBIAN_FASHION if dataset == "fashion_mnist" else SHARED
    if not src.is_dir():
        why = ("Debian's dataset-fashion-mnist is not installed (apt-get install -y dataset-fashion-mnist)"
               if dataset == "fashion_mnist" else
               f"no shared real-data folder at {SHARED} (set AUTONORM_SHARED_DATA)")
        print(f"SKIP {dataset}: {why}")
        pytest.skip(why)
    return src


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("real")


@pytest.fixture(scope="module")
def prepared(work):
    """dataset -> processed folder, built on first use (download --from, then preprocess)."""
    cache: dict = {}

    def get(dataset: str) -> Path:
        if dataset not in cache:
            src = _source(dataset)
            raw, out = work / "raw", work / "data" / dataset
            t0 = time.time()
            assert main(["download", "--dataset", dataset, "--raw-dir", str(raw), "--from", str(src)]) == 0
            t1 = time.time()
            assert main(["preprocess", "--dataset", dataset, "--raw-dir", str(raw), "--out", str(out),
                         "--options-json", json.dumps(OPTIONS.get(dataset, {}))]) == 0
            TIMINGS[dataset] = {"download_from_s": round(t1 - t0, 2), "preprocess_s": round(time.time() - t1, 2)}
            print(f"{dataset}: {TIMINGS[dataset]}")
            cache[dataset] = out
        return cache[dataset]
    return get


def _meta(path: Path) -> dict:
    return json.loads((path / "meta.json").read_text())


@pytest.mark.parametrize("dataset", SHARED_SETS + ["fashion_mnist"])
def test_real_provenance_verified(prepared, work, dataset):
    meta = _meta(prepared(dataset))
    prov = meta["provenance"]
    assert prov["status"] == "verified", prov
    assert prov["files"] and all(f["verified"] and len(f["sha256"]) == 64 for f in prov["files"])
    marker = json.loads((work / "raw" / dataset / ".complete").read_text())
    assert marker["provenance"]["status"] == "verified" and marker["copied"]
    assert set(meta["split_files"]) >= {"train", "val", "test"}


@pytest.mark.parametrize("dataset,majority", [("mnist", 11.35), ("fashion_mnist", 10.0)])
def test_real_idx_sets(prepared, dataset, majority):
    path = prepared(dataset)
    meta = _meta(path)
    # 60,000 official train images = 6,000 held out + 54,000, of which max_train are used; 10,000 test
    assert meta["sizes"] == {"train": 12000, "val": 6000, "test": 10000}
    assert "12000 of the 54000" in meta["split_note"]
    assert all("decompressed" in f["check"] or "uncompressed" in f["check"] for f in meta["provenance"]["files"])
    assert meta["trivial_baseline"]["test"]["accuracy"] == pytest.approx(majority)  # most frequent test class
    ds = load_processed(path)
    x, y = ds.split("test")
    assert x.shape == (10000, 1, 28, 28) and x.dtype == torch.uint8 and sorted(y.unique().tolist()) == list(range(10))


def test_real_ptb(prepared):
    meta = _meta(prepared("ptb_pos"))
    assert meta["source"]["n_sentences"] == 3914 and meta["source"]["n_files"] == 199
    assert sum(meta["sizes"].values()) == 3914 and meta["num_tags"] >= 45
    base = meta["trivial_baseline"]
    assert base["name"].startswith("most-frequent tag per word")
    assert 87.0 <= base["test"]["accuracy"] <= 91.0  # the classic ~89 % of the most-frequent-tag baseline


def test_real_sst2(prepared):
    meta = _meta(prepared("sst2"))
    assert meta["source"]["rows"] == {"train": 67349, "validation": 872}
    assert meta["sizes"]["test"] == 872 and meta["sizes"]["train"] + meta["sizes"]["val"] == 67349
    files = {f["path"]: f["sha256"] for f in meta["provenance"]["files"]}
    assert files["SST-2/train.tsv"] == "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1"
    assert files["SST-2/dev.tsv"] == "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0"
    assert "clichés" in meta["itos"]  # non-ASCII letters stay inside tokens
    assert meta["trivial_baseline"]["test"]["accuracy"] == pytest.approx(100 * 444 / 872)  # 444 positive


def test_real_energy(prepared):
    meta = _meta(prepared("energy_efficiency"))
    assert meta["source"]["rows"] == 768 and sum(meta["sizes"].values()) == 768
    rmse = meta["trivial_baseline"]["test"]["rmse"]
    assert meta["trivial_baseline"]["name"] == "train-mean predictor" and 9.0 <= rmse <= 12.0


def test_real_california(prepared):
    path = prepared("california_housing")
    meta = _meta(path)
    assert meta["source"]["rows"] == 20640 and sum(meta["sizes"].values()) == 20640
    assert meta["feature_names"] == ["MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup",
                                     "Latitude", "Longitude"]
    # scikit-learn's dataset: target mean 2.0686 (100,000 USD), MedInc mean 3.8707, AveRooms mean 5.4290
    import numpy as np
    means = dict(zip(meta["feature_names"], meta["feature_mean"]))
    assert abs(means["MedInc"] - 3.87) < 0.05 and abs(means["AveRooms"] - 5.43) < 0.1
    assert abs(meta["y_mean"] - 2.07) < 0.03
    assert 1.0 <= meta["trivial_baseline"]["test"]["rmse"] <= 1.3
    y = load_processed(path).split("train")[1]
    assert bool(torch.isfinite(y).all()) and float(y.max()) == pytest.approx(5.00001, rel=1e-5)
    assert np.isfinite(meta["y_std"])


def test_real_processed_corruption_detected(prepared, work):
    """Flipped bytes in a real processed split: named error, not a silent wrong number."""
    import shutil
    from autonorm.data import DataCorruptError
    src = prepared("energy_efficiency")
    copy = work / "damaged_energy"
    shutil.copytree(src, copy)
    f = copy / "train.pt"
    data = bytearray(f.read_bytes())
    data[len(data) - 200] ^= 0x01
    f.write_bytes(bytes(data))
    with pytest.raises(DataCorruptError, match="rerun preprocess"):
        load_processed(copy).split("train")


def test_real_timings_reported():
    """Prints the per-dataset timings measured above (run last in this module)."""
    if not TIMINGS:
        pytest.skip("no real dataset was prepared in this session")
    print("real-data timings (s):", json.dumps(TIMINGS, sort_keys=True))
    assert all(t["download_from_s"] < 120 and t["preprocess_s"] < 180 for t in TIMINGS.values())
