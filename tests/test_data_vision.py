"""Vision loaders on fixture files in the real raw formats (IDX gz, CIFAR pickles/tar, SVHN .mat)."""
from pathlib import Path

import numpy as np
import pytest
import torch

import fixtures_data as fx
from autonorm.data import DataCorruptError, DataMissingError, load_processed, registry
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
    # the IDX bytes survive unchanged (test split keeps the official order)
    import gzip
    raw_test = np.frombuffer(gzip.decompress((raw / "mnist/MNIST/raw/t10k-images-idx3-ubyte.gz").read_bytes())[16:],
                             np.uint8).reshape(20, 1, 28, 28)
    assert np.array_equal(ds.split("test")[0].numpy(), raw_test)


def test_fashion_uncompressed_files_accepted(tmp_path):
    raw = tmp_path / "raw"
    fx.write_mnist(raw, "fashion_mnist", gz=False)
    meta = preprocess("fashion_mnist", raw, tmp_path / "out")
    assert meta["source"]["unverified"] and meta["class_names"][0] == "T-shirt/top"


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
    assert not (tmp_path / "data").exists()  # nothing written


def test_corrupt_file_is_an_error_and_nothing_is_written(tmp_path):
    raw = tmp_path / "raw"
    fx.write_mnist(raw, "mnist")  # fixture bytes != the published MD5s
    out = tmp_path / "data" / "mnist"
    with pytest.raises(DataCorruptError) as ei:
        preprocess("mnist", raw, out)
    msg = str(ei.value)
    assert "f68b3c2dcbeaaa9fbdd348bbdeb94873" in msg and "train-images-idx3-ubyte.gz" in msg
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
