"""The 15 CIFAR-10-C corruptions and the corruption-set builder (official layout)."""
import tarfile

import numpy as np
import pytest

import helpers.raw_files as fx
from autonorm.data import CORRUPTIONS, DataCorruptError, load_corruptions
from autonorm.data import corruption_sets
from autonorm.data.cli import main
from autonorm.data.corruptions import corrupt, elastic_displacement
from autonorm.data.storage import write_processed
from autonorm.data.vision import build_vision

IMGS = fx.edge_images(8, seed=0)


def _damage(y, x):
    """1 - Pearson correlation with the clean image (mean over images): structure destroyed."""
    y = y.reshape(len(y), -1).astype(float)
    x = x.reshape(len(x), -1).astype(float)
    y = y - y.mean(1, keepdims=True)
    x = x - x.mean(1, keepdims=True)
    return float(np.mean(1 - (y * x).sum(1) / np.sqrt((y * y).sum(1) * (x * x).sum(1) + 1e-9)))


def test_fifteen_names():
    assert len(CORRUPTIONS) == 15 and len(set(CORRUPTIONS)) == 15


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_corruption_shape_dtype_determinism_severity(name):
    outs = {s: corrupt(IMGS, name, s, seed=0) for s in (1, 5)}
    for y in outs.values():
        assert y.shape == IMGS.shape and y.dtype == np.uint8
    assert np.array_equal(corrupt(IMGS, name, 5, seed=0), outs[5])  # deterministic for a seed
    assert not np.array_equal(outs[5], IMGS)
    if name == "elastic_transform":
        # The official CIFAR table gives severity 1 the *largest* random affine jitter (0.08*32 px) and no
        # elastic field; severity grows through the local elastic displacement, which we check instead.
        rng = np.random.default_rng(0)
        d1 = np.abs(np.stack(elastic_displacement(8, 32, 32, 1, rng))).mean()
        d5 = np.abs(np.stack(elastic_displacement(8, 32, 32, 5, rng))).mean()
        assert d1 == 0 and d5 > 0.1
    else:
        assert _damage(outs[5], IMGS) > _damage(outs[1], IMGS), name


def test_seed_changes_random_corruptions():
    assert not np.array_equal(corrupt(IMGS, "gaussian_noise", 3, seed=0), corrupt(IMGS, "gaussian_noise", 3, seed=1))


def _source(tmp_path, n_test=6, name="smoke_shapes32"):
    rng = np.random.default_rng(0)
    x = fx.edge_images(n_test + 4, 1).transpose(0, 3, 1, 2)
    y = rng.integers(0, 8, len(x))
    splits = {"train": (x[:2], y[:2]), "val": (x[2:4], y[2:4]), "test": (x[4:], y[4:])}
    meta, out = build_vision(name, splits, [str(i) for i in range(10 if name == "cifar10" else 8)], {"split_seed": 0})
    write_processed(tmp_path / name, meta, out)
    return tmp_path / name, x[4:], y[4:]


def test_generated_set_official_layout(tmp_path):
    src, x, y = _source(tmp_path, 6)
    out = tmp_path / "smoke_shapes32_c"
    assert main(["corruptions", "--source", str(src), "--raw-dir", str(tmp_path / "raw"), "--out", str(out),
                 "--seed", "0"]) == 0
    meta, arrays, labels = load_corruptions(out)
    assert meta["generated"] is True and meta["corruptions"] == CORRUPTIONS and meta["severities"] == 5
    assert meta["n_per_severity"] == 6 and "frost" in meta["note"] and "GENERATED" in meta["note"]
    assert np.array_equal(labels, np.tile(y, 5))
    xs = x.transpose(0, 2, 3, 1)
    for c in CORRUPTIONS:
        a = arrays[c]
        assert a.shape == (30, 32, 32, 3) and a.dtype == np.uint8
        for s in (1, 5):  # severity s lives in rows (s-1)*N .. s*N-1
            assert np.array_equal(a[(s - 1) * 6:s * 6], corrupt(xs, c, s, seed=0))


def _fake_official(raw, n, corrupt_one=False):
    d = raw / "cifar10c" / "CIFAR-10-C"
    d.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for c in CORRUPTIONS:
        np.save(d / f"{c}.npy", rng.integers(0, 256, (5 * n, 32, 32, 3), dtype=np.uint8))
    np.save(d / "labels.npy", np.tile(np.arange(n) % 10, 5).astype(np.uint8))
    return d


def test_official_files_used_and_tar_verified(tmp_path, monkeypatch):
    monkeypatch.setattr(corruption_sets, "OFFICIAL_N", 4)
    src, _, _ = _source(tmp_path, 4, "cifar10")
    raw = tmp_path / "raw"
    d = _fake_official(raw, 4)
    meta = corruption_sets.build_corruption_set(src, raw, tmp_path / "c1", allow_download=False)
    assert meta["generated"] is False and meta["n_per_severity"] == 4
    _, arrays, _ = load_corruptions(tmp_path / "c1")
    assert np.array_equal(arrays["fog"], np.load(d / "fog.npy"))
    # archive only: a corrupt (non-official) tar is an error, never a reason to generate
    with tarfile.open(raw / "cifar10c" / "CIFAR-10-C.tar", "w") as tf:
        tf.add(d, arcname="CIFAR-10-C")
    import shutil
    shutil.rmtree(d)
    with pytest.raises(DataCorruptError, match="56bf5dcef84df0e2308c6dcbcbbd8499"):
        corruption_sets.build_corruption_set(src, raw, tmp_path / "c2", allow_download=False)
    assert not (tmp_path / "c2").exists()
    fx.patch_checksums(monkeypatch, "cifar10c", raw)
    meta = corruption_sets.build_corruption_set(src, raw, tmp_path / "c2", allow_download=False)
    assert meta["generated"] is False and "md5 verified" in meta["source"]


def test_cifar10_falls_back_to_generation_when_unavailable(tmp_path, monkeypatch):
    src, _, _ = _source(tmp_path, 3, "cifar10")
    meta = corruption_sets.build_corruption_set(src, tmp_path / "raw", tmp_path / "c", allow_download=False)
    assert meta["generated"] is True and "not in" in meta["why_generated"]


def test_generate_decision_is_revisited_not_frozen(tmp_path, monkeypatch):
    """Offline: download writes a 'generate' marker (exit 0); once the official release is placed,
    planned_source says 'official' and the next build uses it (the marker does not freeze the choice)."""
    import json
    from autonorm.data import integrity
    monkeypatch.setattr(integrity, "host_reachable", lambda *a, **k: False)
    monkeypatch.setattr(corruption_sets, "host_reachable", lambda *a, **k: False)
    monkeypatch.setattr(corruption_sets, "OFFICIAL_N", 4)
    raw = tmp_path / "raw"
    assert corruption_sets.planned_source("cifar10c", raw) == "generated"
    assert corruption_sets.planned_source("smoke_shapes32_c", raw) == "generated"
    assert main(["download", "--dataset", "cifar10c", "--raw-dir", str(raw)]) == 0
    marker = json.loads((raw / "cifar10c" / ".complete").read_text())
    assert marker["decision"] == "generate" and "no network" in marker["why"]
    src, _, _ = _source(tmp_path, 4, "cifar10")
    meta = corruption_sets.build_corruption_set(src, raw, tmp_path / "c", allow_download=False)
    assert meta["generated"] is True and meta["used"] == "generated"
    _fake_official(raw, 4)  # the official release appears later
    assert corruption_sets.planned_source("cifar10c", raw) == "official"
    meta = corruption_sets.build_corruption_set(src, raw, tmp_path / "c", allow_download=False)
    assert meta["generated"] is False and meta["used"] == "official"
    assert main(["download", "--dataset", "cifar10c", "--raw-dir", str(raw)]) == 0
    assert json.loads((raw / "cifar10c" / ".complete").read_text())["decision"] == "official"


def test_official_files_come_from_a_local_folder(tmp_path, monkeypatch, capsys):
    """--from finds the official release through its registry entry's source, as for a dataset:
    the extracted folder anywhere below it, copied into R/cifar10c; two such folders are a
    question for the user, not a guess."""
    import json
    monkeypatch.setattr(corruption_sets, "host_reachable", lambda *a, **k: False)
    monkeypatch.setattr(corruption_sets, "OFFICIAL_N", 4)
    downloads = tmp_path / "downloads"
    official = _fake_official(downloads / "release", 4)
    raw = tmp_path / "raw"
    assert main(["download", "--dataset", "cifar10c", "--raw-dir", str(raw), "--from", str(downloads)]) == 0
    assert np.array_equal(np.load(raw / "cifar10c" / "CIFAR-10-C" / "fog.npy"), np.load(official / "fog.npy"))
    marker = json.loads((raw / "cifar10c" / ".complete").read_text())
    assert marker["decision"] == "official" and marker["copied"] == ["CIFAR-10-C"]
    second = _fake_official(downloads / "copy", 4)
    capsys.readouterr()
    assert main(["download", "--dataset", "cifar10c", "--raw-dir", str(tmp_path / "raw2"),
                 "--from", str(downloads)]) != 0
    err = capsys.readouterr().err
    assert "several candidates for CIFAR-10-C/" in err and str(second) in err and str(official) in err


def test_a_folder_without_the_official_files_says_what_it_looked_for(tmp_path):
    (tmp_path / "empty").mkdir()
    assert main(["download", "--dataset", "cifar10c", "--raw-dir", str(tmp_path / "raw"),
                 "--from", str(tmp_path / "empty")]) != 0


def test_generating_with_several_workers_writes_the_same_arrays(tmp_path):
    """The workflow passes its thread count as --workers: one process per corruption must give the
    arrays one process gives (each corruption draws from its own seeded generator)."""
    labels = np.arange(len(IMGS)) % 3
    for workers in (1, 2):
        (tmp_path / str(workers)).mkdir()
        corruption_sets.generate(IMGS, labels, tmp_path / str(workers), seed=0, workers=workers)
    for f in sorted((tmp_path / "1").iterdir()):
        assert np.array_equal(np.load(f), np.load(tmp_path / "2" / f.name)), f.name
    assert len(list((tmp_path / "2").iterdir())) == len(CORRUPTIONS) + 1
