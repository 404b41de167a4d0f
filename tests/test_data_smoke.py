"""Smoke stand-ins, the in-memory loader and on-device augmentation."""
import json

import numpy as np
import pytest
import torch

from autonorm.data import DATASETS, SMOKE_DATASETS, load_processed
from autonorm.data.augment import normalize_images, random_crop_flip
from autonorm.data.cli import main


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("smoke")
    for d in SMOKE_DATASETS:
        assert main(["download", "--dataset", d, "--raw-dir", str(root / "raw")]) == 0
        assert main(["preprocess", "--dataset", d, "--raw-dir", str(root / "raw"), "--out", str(root / "data" / d)]) == 0
    return root


def test_registry():
    assert len([d for d in DATASETS if not DATASETS[d].standin]) == 9
    for d in SMOKE_DATASETS:
        assert DATASETS[d].standin and not DATASETS[d].needs_download


@pytest.mark.parametrize("name", SMOKE_DATASETS)
def test_smoke_outputs_labelled_standin(smoke_dir, name):
    ds = load_processed(smoke_dir / "data" / name)
    m = ds.meta
    assert m["standin"] is True and "STAND-IN" in m["description"] and m["name"] == name
    assert m["task"] == DATASETS[name].task and set(m["sizes"]) == {"train", "val", "test"}
    assert (smoke_dir / "raw" / name / ".complete").is_file()
    for split in ("train", "val", "test"):
        x, y = ds.split(split)
        assert len(x) == len(y) == m["sizes"][split]
    json.dumps(m)


def test_smoke_contract_shapes(smoke_dir):
    d = lambda n: load_processed(smoke_dir / "data" / n)
    x, _ = d("smoke_digits").split("train")
    assert x.shape[1:] == (1, 8, 8) and x.dtype == torch.uint8 and int(x.max()) == 255
    x, y = d("smoke_shapes32").split("train")
    assert x.shape == (2000, 3, 32, 32) and d("smoke_shapes32").meta["num_classes"] == 8
    assert np.bincount(y.numpy()).min() >= 200
    xp, yp = d("smoke_pos").split("val")
    assert ((xp == 0) == (yp == -100)).all() and d("smoke_pos").meta["ambiguous_words"]
    xs, ys = d("smoke_sentiment").split("train")
    assert set(ys.tolist()) == {0, 1} and "not" in d("smoke_sentiment").meta["itos"]
    xd, yd = d("smoke_diabetes").split("train")
    assert xd.dtype == torch.float32 and xd.shape[1] == 10 and float(yd.mean()) > 50  # original units


def test_smoke_deterministic(smoke_dir, tmp_path):
    for name in ("smoke_shapes32", "smoke_pos"):
        assert main(["preprocess", "--dataset", name, "--raw-dir", str(tmp_path), "--out", str(tmp_path / name)]) == 0
        a, b = load_processed(smoke_dir / "data" / name), load_processed(tmp_path / name)
        for s in ("train", "test"):
            assert torch.equal(a.split(s)[0], b.split(s)[0]) and torch.equal(a.split(s)[1], b.split(s)[1])
    assert main(["preprocess", "--dataset", "smoke_shapes32", "--raw-dir", str(tmp_path), "--out",
                 str(tmp_path / "other"), "--options-json", '{"split_seed": 1}']) == 0
    assert not torch.equal(load_processed(tmp_path / "other").split("test")[0],
                           load_processed(tmp_path / "smoke_shapes32").split("test")[0])


def test_sentiment_needs_order():
    """Negation and contrast make the labels non-linear in the bag of words."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from autonorm.data.smoke import generate_sentiment
    texts, labels = generate_sentiment(2000, 0)
    good = [int(lab) for t, lab in zip(texts, labels) if "good" in t and len(t) <= 7]
    assert set(good) == {0, 1}  # "... good" and "... not good"
    X = CountVectorizer(token_pattern=r"[^ ]+").fit_transform([" ".join(t) for t in texts])
    acc = LogisticRegression(max_iter=2000).fit(X[:1500], labels[:1500]).score(X[1500:], labels[1500:])
    assert acc < 0.8, acc


def test_batches_and_augment(smoke_dir):
    ds = load_processed(smoke_dir / "data" / "smoke_shapes32")
    g = torch.Generator().manual_seed(0)
    seen = 0
    for xb, yb in ds.batches("train", 128, shuffle=True, generator=g):
        seen += len(yb)
    assert seen == 2000
    xb, _ = next(ds.batches("train", 16))
    a = random_crop_flip(xb, 4, torch.Generator().manual_seed(1))
    b = random_crop_flip(xb, 4, torch.Generator().manual_seed(1))
    assert torch.equal(a, b) and a.dtype == torch.uint8 and a.shape == xb.shape
    # each output is a shifted (and maybe mirrored) window of the zero-padded input
    pad = torch.zeros(16, 3, 40, 40, dtype=torch.uint8)
    pad[:, :, 4:36, 4:36] = xb
    for i in range(16):
        ok = any(torch.equal(a[i], w) or torch.equal(a[i], w.flip(-1))
                 for oy in range(9) for ox in range(9) for w in [pad[i, :, oy:oy + 32, ox:ox + 32]])
        assert ok
    m = ds.meta["image"]
    z = normalize_images(xb, m["mean"], m["std"])
    assert z.dtype == torch.float32
    ref = (xb.float() / 255 - torch.tensor(m["mean"]).view(1, 3, 1, 1)) / torch.tensor(m["std"]).view(1, 3, 1, 1)
    assert torch.allclose(z, ref, atol=1e-6)
    zf = random_crop_flip(z, 2)
    assert zf.dtype == torch.float32


def test_smoke_digits_split_note_comes_from_the_split_as_built():
    from autonorm.data import smoke

    meta, splits = smoke.preprocess_smoke_digits({"val_fraction": 0.15, "test_fraction": 0.2, "split_seed": 0})
    n = [len(splits[k][1]) for k in ("train", "val", "test")]
    pct = "/".join(str(round(100 * k / sum(n))) for k in n)
    assert pct == "65/15/20" and meta["split_note"].startswith(f"seeded {pct} split")
    assert "70/10/20" not in meta["description"] + meta["split_note"]
