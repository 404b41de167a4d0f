"""Writers of tiny fixture files in the *real* raw formats of every dataset.

Why: the loaders must be tested on the exact on-disk formats (IDX gz, CIFAR
pickles, SVHN .mat, GLUE TSV/parquet, treebank .mrg, UCI xlsx, scikit-learn's
California cache/archive), but no network is available and the real files are
large.  The published checksums obviously do not match these fixtures, so
``patch_checksums`` replaces the expected digests in the registry by the
fixtures' own (which also exercises the verification path).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import pickle
import struct
import tarfile
from pathlib import Path

import numpy as np

from autonorm.data import registry


def md5(path) -> str:
    return hashlib.md5(Path(path).read_bytes()).hexdigest()


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def patch_checksums(monkeypatch, dataset: str, raw_dir) -> None:
    """Expected checksums := those of the fixture files that exist (others unchanged).

    Also the content-level references: uncompressed IDX MD5s, and the canonical
    content hashes (SST-2 rows, treebank manifest, Energy table) of the fixtures.
    """
    from autonorm.data import integrity
    root = Path(raw_dir) / dataset
    new = {}
    for rel, (algo, want) in registry.CHECKSUMS.get(dataset, {}).items():
        p = root / rel
        new[rel] = (algo, hashlib.new(algo, p.read_bytes()).hexdigest()) if p.is_file() else (algo, want)
    monkeypatch.setitem(registry.CHECKSUMS, dataset, new)
    if dataset in registry.IDX_MD5:
        folder = {"mnist": "MNIST", "fashion_mnist": "FashionMNIST"}[dataset]
        idx = {}
        for base, want in registry.IDX_MD5[dataset].items():
            plain, gz = root / folder / "raw" / base, root / folder / "raw" / (base + ".gz")
            data = plain.read_bytes() if plain.is_file() else gzip.decompress(gz.read_bytes()) if gz.is_file() else None
            idx[base] = hashlib.md5(data).hexdigest() if data is not None else want
        monkeypatch.setitem(registry.IDX_MD5, dataset, idx)
    content = dict(registry.CONTENT_SHA256.get(dataset, {}))
    if dataset == "sst2":
        for split, rows in (("train", SST_TRAIN), ("validation", SST_DEV)):
            content[split] = integrity.rows_sha256(rows)
    if dataset == "ptb_pos":
        d = root / "nltk_data" / "corpora" / "treebank" / "combined"
        if d.is_dir():
            content["combined"] = integrity.manifest_sha256((f.name, sha256(f)) for f in d.glob("wsj_*.mrg"))
    if dataset == "energy_efficiency":
        content["table"] = integrity.table_sha256(energy_frame(40)[[f"X{i}" for i in range(1, 9)] + ["Y1", "Y2"]]
                                                  .to_numpy(float))
    if content:
        monkeypatch.setitem(registry.CONTENT_SHA256, dataset, content)


# ------------------------------------------------------------------ MNIST / Fashion-MNIST (IDX)
def idx_bytes(arr: np.ndarray) -> bytes:
    arr = np.asarray(arr, dtype=np.uint8)
    magic = 0x0800 | arr.ndim  # unsigned byte type
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in arr.shape) + arr.tobytes()


def write_mnist(raw_dir, dataset="mnist", n_train=60, n_test=20, gz=True, seed=0):
    folder = {"mnist": "MNIST", "fashion_mnist": "FashionMNIST"}[dataset]
    d = Path(raw_dir) / dataset / folder / "raw"
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        imgs = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = (np.arange(n) % 10).astype(np.uint8)
        for kind, arr in (("images-idx3", imgs), ("labels-idx1", labels)):
            name = f"{prefix}-{kind}-ubyte"
            data = idx_bytes(arr)
            if gz:
                (d / (name + ".gz")).write_bytes(gzip.compress(data))
            else:
                (d / name).write_bytes(data)
    return d


# ------------------------------------------------------------------ CIFAR (python pickle layout)
def _pickle(obj) -> bytes:
    return pickle.dumps(obj, protocol=2)


def write_cifar10(raw_dir, per_batch=20, n_test=20, as_tar=False, seed=0):
    rng = np.random.default_rng(seed)
    files = {}
    for i in range(1, 6):
        files[f"data_batch_{i}"] = _pickle({"batch_label": f"training batch {i} of 5",
                                             "data": rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8),
                                             "labels": [int(v) for v in (np.arange(per_batch) + i) % 10],
                                             "filenames": [f"f{j}.png" for j in range(per_batch)]})
    files["test_batch"] = _pickle({"batch_label": "testing batch 1 of 1",
                                   "data": rng.integers(0, 256, (n_test, 3072), dtype=np.uint8),
                                   "labels": [int(v) for v in np.arange(n_test) % 10],
                                   "filenames": [f"t{j}.png" for j in range(n_test)]})
    files["batches.meta"] = _pickle({"num_cases_per_batch": per_batch,
                                     "label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog",
                                                     "frog", "horse", "ship", "truck"], "num_vis": 3072})
    return _write_cifar(Path(raw_dir) / "cifar10", "cifar-10-batches-py", "cifar-10-python.tar.gz", files, as_tar)


def write_cifar100(raw_dir, n_train=50, n_test=20, as_tar=False, seed=0):
    rng = np.random.default_rng(seed)
    files = {}
    for split, n in (("train", n_train), ("test", n_test)):
        files[split] = _pickle({"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                                "fine_labels": [int(v) for v in np.arange(n) % 100],
                                "coarse_labels": [int(v) for v in np.arange(n) % 20],
                                "filenames": [f"{split}{j}.png" for j in range(n)]})
    files["meta"] = _pickle({"fine_label_names": [f"class{i:03d}" for i in range(100)],
                             "coarse_label_names": [f"super{i:02d}" for i in range(20)]})
    return _write_cifar(Path(raw_dir) / "cifar100", "cifar-100-python", "cifar-100-python.tar.gz", files, as_tar)


def _write_cifar(root: Path, folder: str, tarname: str, files, as_tar: bool):
    root.mkdir(parents=True, exist_ok=True)
    if as_tar:
        with tarfile.open(root / tarname, "w:gz") as tf:
            for name, data in files.items():
                info = tarfile.TarInfo(f"{folder}/{name}")
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        return root / tarname
    (root / folder).mkdir(exist_ok=True)
    for name, data in files.items():
        (root / folder / name).write_bytes(data)
    return root / folder


# ------------------------------------------------------------------ SVHN (.mat)
def write_svhn(raw_dir, n_train=30, n_test=12, seed=0):
    from scipy.io import savemat
    root = Path(raw_dir) / "svhn"
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for split, n in (("train", n_train), ("test", n_test)):
        X = rng.integers(0, 256, (32, 32, 3, n), dtype=np.uint8)  # H x W x C x N, as in the release
        y = (np.arange(n) % 10 + 1).astype(np.uint8).reshape(n, 1)  # 1..10, 10 means digit 0
        savemat(root / f"{split}_32x32.mat", {"X": X, "y": y})
    return root


# ------------------------------------------------------------------ SST-2
SST_TRAIN = [("it 's a charming and often affecting journey . ", 1), ("unflinchingly bleak and desperate ", 0),
             ("the movie is not good ", 0), ("a gorgeous , witty , seductive movie . ", 1),
             ("the acting , costumes , music , cinematography and sound are all astounding ", 1),
             ("it 's slow -- very , very slow . ", 0), ("hide new secretions from the parental units ", 0),
             ("contains no wit , only labored gags ", 0), ("that loves its characters ", 1),
             ("demonstrates that the director of such hollywood blockbusters as patriot games can still turn out a small , personal film ", 1)]  # noqa: E501
SST_DEV = [("it 's a lovely film with lovely performances by buy and accorsi . ", 1),
           ("no one goes unindicted here , which is probably for the best . ", 1),
           ("the title not only describes its main characters , but the lazy people behind the camera as well . ", 0),
           ("unfortunately the story and the actors are served with a hack script . ", 0)]


def write_sst2_tsv(raw_dir, train=SST_TRAIN, dev=SST_DEV):
    d = Path(raw_dir) / "sst2" / "SST-2"
    d.mkdir(parents=True, exist_ok=True)
    for name, rows in (("train.tsv", train), ("dev.tsv", dev)):
        (d / name).write_text("sentence\tlabel\n" + "".join(f"{s}\t{lab}\n" for s, lab in rows), encoding="utf-8")
    return d


def write_sst2_parquet(raw_dir, train=SST_TRAIN, dev=SST_DEV):
    import pandas as pd
    d = Path(raw_dir) / "sst2" / "sst2"
    d.mkdir(parents=True, exist_ok=True)
    for split, rows in (("train", train), ("validation", dev)):
        pd.DataFrame({"sentence": [s for s, _ in rows], "label": [lab for _, lab in rows],
                      "idx": list(range(len(rows)))}).to_parquet(d / f"{split}-00000-of-00001.parquet")
    return d


# ------------------------------------------------------------------ Penn Treebank (.mrg)
MRG_1 = """( (S
    (NP-SBJ
      (NP (NNP Pierre) (NNP Vinken) )
      (, ,)
      (ADJP
        (NP (CD 61) (NNS years) )
        (JJ old) )
      (, ,) )
    (VP (MD will)
      (VP (VB join)
        (NP (DT the) (NN board) )
        (PP-CLR (IN as)
          (NP (DT a) (JJ nonexecutive) (NN director) ))
        (NP-TMP (NNP Nov.) (CD 29) )))
    (. .) ))
( (S
    (NP-SBJ (NNP Mr.) (NNP Vinken) )
    (VP (VBZ is)
      (NP-PRD
        (NP (NN chairman) )
        (PP (IN of)
          (NP
            (NP (NNP Elsevier) (NNP N.V.) )
            (, ,)
            (NP (DT the) (NNP Dutch) (VBG publishing) (NN group) )))))
    (. .) ))
"""
MRG_2 = """( (S
    (NP-SBJ-1 (DT The) (NN company) )
    (VP (VBD said)
      (SBAR (-NONE- 0)
        (S
          (NP-SBJ (PRP it) )
          (VP (MD would)
            (VP (VB sell)
              (NP (PRP$ its) (NNS shares) ))))))
    (. .) ))
"""


def write_ptb_sample(raw_dir, n_files=12):
    d = Path(raw_dir) / "ptb_pos" / "nltk_data" / "corpora" / "treebank" / "combined"
    d.mkdir(parents=True, exist_ok=True)
    for i in range(1, n_files + 1):
        (d / f"wsj_{i:04d}.mrg").write_text(MRG_1 if i % 2 else MRG_2, encoding="utf-8")
    return d


def write_wsj_full(raw_dir):
    base = Path(raw_dir) / "ptb_pos" / "wsj"
    for sec in (0, 1, 19, 22):
        d = base / f"{sec:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"wsj_{sec:02d}01.mrg").write_text(MRG_1 + MRG_2, encoding="utf-8")
    return base


# ------------------------------------------------------------------ Energy Efficiency (UCI 242)
def energy_frame(n=40, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 8))
    return pd.DataFrame({**{f"X{i + 1}": X[:, i] for i in range(8)},
                         "Y1": 10 + 20 * X[:, 0] + rng.normal(0, 1, n), "Y2": 15 + 10 * X[:, 1]})


def write_energy_xlsx(raw_dir, n=40):
    d = Path(raw_dir) / "energy_efficiency"
    d.mkdir(parents=True, exist_ok=True)
    energy_frame(n).to_excel(d / "ENB2012_data.xlsx", index=False, engine="openpyxl")
    return d / "ENB2012_data.xlsx"


def write_energy_csv(raw_dir, n=40):
    d = Path(raw_dir) / "energy_efficiency"
    d.mkdir(parents=True, exist_ok=True)
    energy_frame(n).to_csv(d / "ENB2012_data.csv", index=False)
    return d / "ENB2012_data.csv"


# ------------------------------------------------------------------ California housing
def write_cal_tgz(raw_dir, n=50, seed=0):
    """StatLib order: longitude, latitude, housingMedianAge, totalRooms, totalBedrooms, population,
    households, medianIncome, medianHouseValue."""
    rng = np.random.default_rng(seed)
    rows = np.column_stack([rng.uniform(-124, -114, n), rng.uniform(32, 42, n), rng.integers(1, 52, n),
                            rng.integers(100, 5000, n), rng.integers(20, 1000, n), rng.integers(50, 3000, n),
                            rng.integers(20, 900, n), rng.uniform(0.5, 15, n), rng.uniform(15000, 500001, n)])
    data = "\n".join(",".join(f"{v:.6f}" for v in r) for r in rows).encode()
    d = Path(raw_dir) / "california_housing"
    d.mkdir(parents=True, exist_ok=True)
    with tarfile.open(d / "cal_housing.tgz", "w:gz") as tf:
        info = tarfile.TarInfo("CaliforniaHousing/cal_housing.data")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    return d / "cal_housing.tgz"


# ------------------------------------------------------------------ edge-rich test images
def edge_images(n=12, seed=0) -> np.ndarray:
    """uint8 NHWC 32x32 RGB images of random rectangles (structure for blur/geometry corruptions)."""
    rng = np.random.default_rng(seed)
    img = np.zeros((n, 32, 32, 3))
    yy, xx = np.mgrid[:32, :32]
    for i in range(n):
        img[i] = rng.random(3) * 0.5
        for _ in range(3):
            a, b = sorted(rng.integers(0, 32, 2))
            c, d = sorted(rng.integers(0, 32, 2))
            img[i][(yy >= a) & (yy <= b) & (xx >= c) & (xx <= d)] = rng.random(3)
    return (img * 255).astype(np.uint8)
