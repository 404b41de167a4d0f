"""Vision loaders on fixture files in the real raw formats (IDX gz, CIFAR pickles/tar, SVHN .mat)."""
import json
import os
import stat

import numpy as np
import pytest
import torch

import helpers.raw_files as fx
from autonorm.data import DataCorruptError, DataMissingError, DataOptionError, load_processed, registry
from autonorm.data.cli import main
from autonorm.data.pipeline import download, preprocess


def _check_vision(out, channels, hw, n_classes):
    ds = load_processed(out)
    m = ds.meta
    assert m["task"] == "image_classification" and m["family"] == "vision" and m["standin"] is False
    assert m["num_classes"] == n_classes and len(m["class_names"]) == n_classes
    assert m["image"]["channels"] == channels and (m["image"]["height"], m["image"]["width"]) == hw
    assert len(m["image"]["mean"]) == channels and all(s > 0 for s in m["image"]["std"])
    for split in ("train", "val", "test", "test_rot90"):
        x, y = ds.split(split)
        assert x.dtype == torch.uint8 and x.shape[1:] == (channels,) + hw and y.dtype == torch.int64
    xt, yt = ds.split("test")
    xr, yr = ds.split("test_rot90")
    assert torch.equal(xr, torch.rot90(xt, 1, dims=(2, 3))) and torch.equal(yr, yt)
    assert sum(m["sizes"].values()) == len(ds.split("train")[1]) + len(ds.split("val")[1]) + len(yt)
    return ds


def test_mnist_gz_through_torchvision(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_mnist(raw, "mnist", n_train=60, n_test=20)
    fx.patch_checksums(monkeypatch, "mnist", raw)
    assert main(["download", "--dataset", "mnist", "--raw-dir", str(raw)]) == 0  # present: verify only
    assert (raw / "mnist" / ".complete").is_file()
    assert main(["preprocess", "--dataset", "mnist", "--raw-dir", str(raw), "--out", str(tmp_path / "out"),
                 "--options-json", '{"val_fraction": 0.25, "split_seed": 3}']) == 0
    ds = _check_vision(tmp_path / "out", 1, (28, 28), 10)
    assert ds.meta["sizes"] == {"train": 45, "val": 15, "test": 20} and ds.meta["split_seed"] == 3
    prov = ds.meta["provenance"]
    assert prov["status"] == "verified" and all(f["verified"] for f in prov["files"])
    # download extracted the verified .gz files; preprocess verifies the uncompressed files torchvision reads
    assert all("uncompressed" in f["check"] and "/raw/" in f["path"] for f in prov["files"])
    marker = json.loads((raw / "mnist" / ".complete").read_text())
    assert all("the .gz is the official archive" in f["check"] for f in marker["provenance"]["files"])
    base = ds.meta["trivial_baseline"]
    assert base["name"] == "majority class" and set(base["test"]) >= {"accuracy", "f1_macro"}
    assert base["test"]["accuracy"] == pytest.approx(10.0)  # fixture labels cycle 0..9: any class is 2 of 20
    # the IDX bytes survive unchanged (test split keeps the official order)
    import gzip
    raw_test = np.frombuffer(gzip.decompress((raw / "mnist/MNIST/raw/t10k-images-idx3-ubyte.gz").read_bytes())[16:],
                             np.uint8).reshape(20, 1, 28, 28)
    assert np.array_equal(ds.split("test")[0].numpy(), raw_test)


def test_plain_idx_unverified_is_an_error_unless_allowed(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_mnist(raw, "fashion_mnist", gz=False)  # fixture bytes != the published uncompressed MD5s
    with pytest.raises(DataCorruptError) as ei:
        preprocess("fashion_mnist", raw, tmp_path / "out")
    msg = str(ei.value)
    assert "train-images-idx3-ubyte" in msg and "f4a8712d7a061bf5bd6d2ca38dc4d50a" in msg  # file, expected md5
    assert str((raw / "fashion_mnist").resolve()) in msg and "--allow-unverified" in msg  # where, how to override
    assert not (tmp_path / "out").exists()
    meta = preprocess("fashion_mnist", raw, tmp_path / "out", {"allow_unverified": True})
    prov = meta["provenance"]
    assert prov["status"] == "unverified" and "UNVERIFIED" in prov["note"]
    assert len(prov["files"]) == 4 and not any(f["verified"] for f in prov["files"])
    assert meta["class_names"][0] == "T-shirt/top"
    # the same plain files, once their MD5s are the expected ones, verify
    fx.patch_checksums(monkeypatch, "fashion_mnist", raw)
    meta = preprocess("fashion_mnist", raw, tmp_path / "out2")
    assert meta["provenance"]["status"] == "verified"
    assert all("uncompressed" in f["check"] for f in meta["provenance"]["files"])


def test_recompressed_gz_verified_on_decompressed_bytes(tmp_path, monkeypatch):
    import gzip
    raw = tmp_path / "raw"
    d = fx.write_mnist(raw, "mnist")
    fx.patch_checksums(monkeypatch, "mnist", raw)  # gz md5s and uncompressed md5s of the fixture
    for f in d.glob("*.gz"):  # recompress: other gz bytes, same content
        f.write_bytes(gzip.compress(gzip.decompress(f.read_bytes()), compresslevel=1, mtime=123))
    meta = preprocess("mnist", raw, tmp_path / "out")
    prov = meta["provenance"]
    assert prov["status"] == "verified" and {f["path"] for f in prov["files"]} == {
        f"MNIST/raw/{b}.gz" for b in registry.IDX_MD5["mnist"]}
    assert all("decompressed" in f["check"] and "recompressed" in f["check"] for f in prov["files"])
    assert all(f["sha256"] == fx.sha256(raw / "mnist" / f["path"]) for f in prov["files"])


def test_corrupt_idx_content_and_broken_gzip_are_errors(tmp_path, monkeypatch):
    import gzip
    raw = tmp_path / "raw"
    d = fx.write_mnist(raw, "mnist")
    fx.patch_checksums(monkeypatch, "mnist", raw)
    f = d / "t10k-labels-idx1-ubyte.gz"
    data = bytearray(gzip.decompress(f.read_bytes()))
    data[-1] ^= 1  # one label changed, recompressed: a valid gzip with wrong content
    f.write_bytes(gzip.compress(bytes(data)))
    with pytest.raises(DataCorruptError, match="t10k-labels-idx1-ubyte.gz.*decompressed") as ei:
        preprocess("mnist", raw, tmp_path / "out")
    assert registry.IDX_MD5["mnist"]["t10k-labels-idx1-ubyte"] in str(ei.value)
    f.write_bytes(b"this is not gzip")
    with pytest.raises(DataCorruptError, match="not a readable gzip"):
        preprocess("mnist", raw, tmp_path / "out", {"allow_unverified": True})  # format errors are never allowed
    assert not (tmp_path / "out").exists()


def test_download_from_mirror_picks_verified_files(tmp_path, monkeypatch):
    """A mirror holding MNIST and Fashion-MNIST under the same file names, nested, one copy uncompressed."""
    import gzip
    import shutil
    mirror = tmp_path / "mirror"
    fx.write_mnist(tmp_path / "a", "mnist", seed=1)
    fx.write_mnist(tmp_path / "b", "fashion_mnist", seed=2)
    fx.patch_checksums(monkeypatch, "mnist", tmp_path / "a")
    fx.patch_checksums(monkeypatch, "fashion_mnist", tmp_path / "b")
    shutil.copytree(tmp_path / "a" / "mnist" / "MNIST" / "raw", mirror / "digits" / "deep")
    shutil.copytree(tmp_path / "b" / "fashion_mnist" / "FashionMNIST" / "raw", mirror / "zalando")
    g = mirror / "digits" / "deep" / "t10k-labels-idx1-ubyte.gz"
    (g.parent / "t10k-labels-idx1-ubyte").write_bytes(gzip.decompress(g.read_bytes()))
    g.unlink()
    raw = tmp_path / "raw"
    stale = raw / "fashion_mnist" / "FashionMNIST" / "raw" / "train-images-idx3-ubyte"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"stale extraction of an older archive")
    for name, seed in (("mnist", 1), ("fashion_mnist", 2)):
        assert main(["download", "--dataset", name, "--raw-dir", str(raw), "--from", str(mirror)]) == 0
        marker = json.loads((raw / name / ".complete").read_text())
        assert marker["provenance"]["status"] == "verified" and len(marker["copied"]) == 4
    assert (raw / "mnist" / "MNIST" / "raw" / "t10k-labels-idx1-ubyte").is_file()  # the plain copy was taken
    assert stale.read_bytes() == gzip.decompress(  # stale file replaced by the verified extraction
        (tmp_path / "b" / "fashion_mnist" / "FashionMNIST" / "raw" / "train-images-idx3-ubyte.gz").read_bytes())
    meta = preprocess("fashion_mnist", raw, tmp_path / "out")
    assert meta["provenance"]["status"] == "verified" and meta["sizes"]["test"] == 20


def test_download_from_folder_without_the_files(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    rc = main(["download", "--dataset", "mnist", "--raw-dir", str(tmp_path / "raw"), "--from", str(tmp_path / "empty")])
    err = capsys.readouterr().err
    assert rc == 2 and "Searched" in err and "train-images-idx3-ubyte.gz" in err
    assert err.count("train-images-idx3-ubyte.gz") == 1  # each missing file once (gz OR plain)
    assert not (tmp_path / "raw" / "mnist" / ".complete").exists()


def test_max_train_subset_after_holdout(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_mnist(raw, "mnist", n_train=60, n_test=20)
    fx.patch_checksums(monkeypatch, "mnist", raw)
    full = preprocess("mnist", raw, tmp_path / "full", {"val_fraction": 0.25})
    sub = preprocess("mnist", raw, tmp_path / "sub", {"val_fraction": 0.25, "max_train": 12})
    assert full["sizes"] == {"train": 45, "val": 15, "test": 20}
    assert sub["sizes"] == {"train": 12, "val": 15, "test": 20} and sub["max_train"] == 12
    assert "max_train" in sub["split_note"] and "12 of the 45" in sub["split_note"]
    a, b = load_processed(tmp_path / "full"), load_processed(tmp_path / "sub")
    assert torch.equal(a.split("val")[0], b.split("val")[0])  # same validation set as the full setting
    xs = {bytes(x.numpy()) for x in a.split("train")[0]}
    assert all(bytes(x.numpy()) in xs for x in b.split("train")[0])  # subset of the full train split
    again = preprocess("mnist", raw, tmp_path / "sub2", {"val_fraction": 0.25, "max_train": 12})
    assert again["split_files"]["train"]["sha256"] == sub["split_files"]["train"]["sha256"]  # seeded
    with pytest.raises(DataOptionError, match="max_train"):
        preprocess("mnist", raw, tmp_path / "bad", {"max_train": 0})


@pytest.mark.parametrize("as_tar", [False, True])
def test_cifar10_folder_and_tar(tmp_path, monkeypatch, as_tar):
    raw = tmp_path / "raw"
    if as_tar:  # md5 of the tar is checked, then the extracted members: expected = same fixture bytes
        fx.write_cifar10(raw, as_tar=False)
        fx.write_cifar10(raw, as_tar=True)
        fx.patch_checksums(monkeypatch, "cifar10", raw)
        import shutil
        shutil.rmtree(raw / "cifar10" / "cifar-10-batches-py")
        download("cifar10", raw)  # verifies + extracts the archive
        marker = json.loads((raw / "cifar10" / ".complete").read_text())
        assert marker["provenance"]["status"] == "verified"
        assert "cifar-10-python.tar.gz" in {f["path"] for f in marker["provenance"]["files"]}
        assert (raw / "cifar10" / "cifar-10-batches-py" / "test_batch").is_file()
    else:
        fx.write_cifar10(raw)
        fx.patch_checksums(monkeypatch, "cifar10", raw)
    meta = preprocess("cifar10", raw, tmp_path / "out", {"val_size": 25})
    assert meta["sizes"] == {"train": 75, "val": 25, "test": 20}
    assert meta["class_names"][:2] == ["airplane", "automobile"]
    _check_vision(tmp_path / "out", 3, (32, 32), 10)


def test_cifar100(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_cifar100(raw)
    fx.patch_checksums(monkeypatch, "cifar100", raw)
    preprocess("cifar100", raw, tmp_path / "out", {"val_size": 10})
    _check_vision(tmp_path / "out", 3, (32, 32), 100)


def test_svhn_label_10_is_digit_0(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    fx.write_svhn(raw)
    fx.patch_checksums(monkeypatch, "svhn", raw)
    preprocess("svhn", raw, tmp_path / "out", {"val_fraction": 0.2})
    ds = _check_vision(tmp_path / "out", 3, (32, 32), 10)
    y = ds.split("test")[1].numpy()
    assert y.min() == 0 and y.max() == 9 and y[9] == 0  # raw label 10 at index 9
    from scipy.io import loadmat
    X = loadmat(raw / "svhn" / "test_32x32.mat")["X"]
    assert np.array_equal(ds.split("test")[0].numpy()[3], X[..., 3].transpose(2, 0, 1))


def test_missing_files_error_names_file_checksum_and_place(tmp_path, capsys):
    raw = tmp_path / "raw"
    rc = main(["preprocess", "--dataset", "cifar10", "--raw-dir", str(raw), "--out", str(tmp_path / "data" / "cifar10")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "cifar-10-python.tar.gz" in err and "c58f30108f718f92721af3b95e74349a" in err
    assert str((raw / "cifar10").resolve()) in err
    missing = err.split("Raw folder for")[0]  # the list of missing files (the layout help follows)
    assert missing.count("cifar-10-python.tar.gz") == 1 and "data_batch_1" not in missing  # archive OR folder
    assert not (tmp_path / "data").exists()  # nothing written


def test_corrupt_file_is_an_error_and_nothing_is_written(tmp_path):
    raw = tmp_path / "raw"
    fx.write_mnist(raw, "mnist")  # fixture bytes != the published MD5s
    out = tmp_path / "data" / "mnist"
    with pytest.raises(DataCorruptError) as ei:
        preprocess("mnist", raw, out)
    msg = str(ei.value)
    assert "6bbc9ace898e44ae57da46a324031adb" in msg and "train-images-idx3-ubyte.gz" in msg
    assert not out.exists() and not (tmp_path / "data").exists()
    assert not (raw / "mnist" / "MNIST" / "raw" / "train-images-idx3-ubyte").exists()  # not extracted either


def test_download_without_network_fails_clearly(tmp_path, monkeypatch):
    import urllib.request

    def no_net(*a, **k):
        raise OSError("network unreachable (test)")
    monkeypatch.setattr(urllib.request, "urlopen", no_net)
    with pytest.raises(DataMissingError) as ei:
        download("svhn", tmp_path / "raw")
    assert "train_32x32.mat" in str(ei.value) and "e26dedcc434d2e4c54c9b2d4a06d8373" in str(ei.value)
    assert not (tmp_path / "raw" / "svhn" / ".complete").exists()


def test_offline_download_fails_fast_naming_file_and_place(tmp_path, monkeypatch):
    """No reachable host: fail in seconds (no library retry back-off) with what to put where."""
    import time
    from autonorm.data import integrity
    monkeypatch.setattr(integrity, "host_reachable", lambda *a, **k: False)
    import torchvision.datasets.utils as tvu

    def must_not_run(*a, **k):
        raise AssertionError("downloader called although offline")
    monkeypatch.setattr(tvu, "download_url", must_not_run)
    t0 = time.time()
    with pytest.raises(DataMissingError) as ei:
        download("fashion_mnist", tmp_path / "raw")
    assert time.time() - t0 < 5
    msg = str(ei.value)
    assert "No network" in msg and "train-images-idx3-ubyte.gz" in msg and "--from" in msg
    assert str((tmp_path / "raw" / "fashion_mnist").resolve()) in msg


def test_host_reachable_times_out_quickly():
    import time
    from autonorm.data.integrity import host_reachable
    t0 = time.time()
    assert host_reachable("nonexistent.invalid", timeout=1.0) is False
    assert time.time() - t0 < 3


def test_registry_checksums_match_torchvision_and_sklearn():
    from torchvision import datasets as tvd
    from sklearn.datasets import _california_housing as cal
    for name, cls, folder in (("mnist", tvd.MNIST, "MNIST"), ("fashion_mnist", tvd.FashionMNIST, "FashionMNIST")):
        for f, md5 in cls.resources:
            assert registry.CHECKSUMS[name][f"{folder}/raw/{f}"] == ("md5", md5)
    for name, cls in (("cifar10", tvd.CIFAR10), ("cifar100", tvd.CIFAR100)):
        assert registry.CHECKSUMS[name][cls.filename] == ("md5", cls.tgz_md5)
        for f, md5 in cls.train_list + cls.test_list + [[cls.meta["filename"], cls.meta["md5"]]]:
            assert registry.CHECKSUMS[name][f"{cls.base_folder}/{f}"] == ("md5", md5)
    for split in ("train", "test"):
        _, f, md5 = tvd.SVHN.split_list[split]
        assert registry.CHECKSUMS["svhn"][f] == ("md5", md5)
    assert registry.CHECKSUMS["california_housing"]["cal_housing.tgz"] == ("sha256", cal.ARCHIVE.checksum)


def test_download_from_folder_with_other_content_copies_nothing(tmp_path, monkeypatch):
    """MNIST files offered as Fashion-MNIST: refused before anything is copied (unless allowed)."""
    fx.write_mnist(tmp_path / "m", "mnist")
    src = tmp_path / "m" / "mnist" / "MNIST" / "raw"
    raw = tmp_path / "raw"
    with pytest.raises(DataCorruptError, match="nothing was copied") as ei:
        download("fashion_mnist", raw, from_dir=src)
    assert registry.IDX_MD5["fashion_mnist"]["t10k-labels-idx1-ubyte"] in str(ei.value)
    assert not (raw / "fashion_mnist").exists()
    download("fashion_mnist", raw, from_dir=src, allow_unverified=True)
    marker = json.loads((raw / "fashion_mnist" / ".complete").read_text())
    assert marker["provenance"]["status"] == "unverified" and len(marker["copied"]) == 4


def test_download_from_rolls_back_copies_that_fail_verification(tmp_path):
    """A copy only the loader can judge (parquet of another SST-2) is removed again when it fails."""
    fx.write_sst2_parquet(tmp_path / "hf")
    raw = tmp_path / "raw"
    with pytest.raises(DataCorruptError, match="rows"):
        download("sst2", raw, from_dir=tmp_path / "hf")
    assert not list((raw / "sst2").rglob("*.parquet")) and not (raw / "sst2" / ".complete").exists()


def test_unverified_cifar_pickles_are_never_loaded(tmp_path):
    """CIFAR's Python pickles are loaded only when verified: allow_unverified does not apply to them."""
    raw = tmp_path / "raw"
    fx.write_cifar10(raw)  # fixture batches != torchvision's MD5s
    with pytest.raises(DataCorruptError, match="never loaded"):
        preprocess("cifar10", raw, tmp_path / "out", {"allow_unverified": True, "val_size": 25})
    assert not (tmp_path / "out").exists()


def test_offline_cifar_names_the_archive_or_the_folder_as_one_choice(tmp_path, monkeypatch):
    from autonorm.data import integrity, vision
    from autonorm.data.errors import DataMissingError

    monkeypatch.setattr(integrity, "host_reachable", lambda *a, **k: False)
    with pytest.raises(DataMissingError) as e:
        vision.download("cifar10", tmp_path)
    text = str(e.value)
    assert "one of:" in text and "cifar-10-python.tar.gz" in text and "cifar-10-batches-py" in text
    assert text.count("\n  - ") == 1  # one item, not the archive and every batch file


def test_from_folder_with_a_symlink_loop_returns(tmp_path):
    from autonorm.data import local_source

    src = tmp_path / "mirror"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "f.txt").write_text("x")
    os.symlink(".", src / "again")
    os.symlink("..", src / "sub" / "up")
    ix = local_source.Index(src)  # never returns on the old code
    assert [p.name for p in ix.files["f.txt"]] == ["f.txt"] and len(ix.files["f.txt"]) == 1


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
