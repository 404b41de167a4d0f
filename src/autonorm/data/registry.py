"""Dataset registry: names, tasks, raw-folder layout and published checksums.

Why one table: the download step, the preprocess step, the error messages and
the Snakemake workflow all need the same facts (where a raw file lives, what
its checksum is, whether a dataset is a stand-in).  Keeping them here means an
error message can never disagree with the loader about where a file belongs.

Raw folder convention: everything for dataset ``D`` lives below ``R/D/`` where
``R`` is ``--raw-dir``.  For the torchvision datasets ``R/D`` is passed as the
torchvision ``root`` so the files land exactly where torchvision puts them.

Checksums verify *content*, so that the same data in another container passes
and anything else fails (docs/data.md lists them all):

* ``CHECKSUMS``: digests of files as published by the source or by the library
  that downloads it (torchvision, scikit-learn, Zenodo), or, for the GLUE
  TSVs, the NLTK treebank zip, the UCI xlsx and StatLib's ``cal_housing.data``,
  the SHA-256 of the files as distributed (a test checks the torchvision and
  scikit-learn values still agree with those libraries).
* ``IDX_MD5``: MD5 of the *uncompressed* IDX files (MNIST: published with many
  mirrors; Fashion-MNIST: computed from Debian's ``dataset-fashion-mnist`` and
  identical to the values other projects publish), so a recompressed ``.gz``
  or an uncompressed copy verifies.
* ``CONTENT_SHA256``: hashes of a canonical serialisation of the content, for
  containers that re-encode the same rows (Hugging Face parquet of SST-2, an
  extracted treebank folder, a CSV export of the Energy table); computed once
  from the verified official files (see ``integrity`` for the serialisations).

A file that verifies against none of these is an error unless the user
passes ``allow_unverified``; then the provenance in ``meta.json`` says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

# The 15 CIFAR-10-C corruptions in Hendrycks & Dietterich's order (noise, blur, weather, digital).
CORRUPTIONS: List[str] = [
    "gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur",
    "motion_blur", "zoom_blur", "snow", "frost", "fog", "brightness", "contrast",
    "elastic_transform", "pixelate", "jpeg_compression",
]

TASKS = ("image_classification", "token_classification", "sequence_classification", "regression")


@dataclass(frozen=True)
class DatasetSpec:
    """What the rest of the pipeline needs to know about one dataset."""

    name: str
    family: str  # vision | nlp | tabular
    task: str  # one of TASKS
    standin: bool  # True for generated data and for real data standing in for a paper dataset
    description: str
    needs_download: bool = True  # False: smoke sets are generated / bundled with sklearn
    rotation: bool = False  # vision: a test_rot90 split is written
    corruption_set: Optional[str] = None  # name of the derived corruption set, if any
    defaults: Dict[str, Any] = field(default_factory=dict)  # default preprocess options
    image_size: Optional[int] = None  # vision: height = width of the images (a patch size must divide it)
    display: Optional[str] = None  # its name in reports and figures (default: the key)
    stands_in_for: Optional[str] = None  # a stand-in: the paper dataset whose claims it mirrors
    standin_label: Optional[str] = None  # a stand-in: what it stands in for, in words (README's table)
    # "module:NAME" of its DatasetSource in autonorm.data (how its raw files are found, verified,
    # fetched and built); imported only when a step needs it: source_of(name)
    source: str = ""
    # the preprocessing options (config `dataset_config.<name>.data`) its builder reads; the config
    # check refuses any other (tests/test_run_identity.py checks these against what the builder reads)
    data_keys: Tuple[str, ...] = ()

    def as_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name, "family": self.family, "task": self.task, "standin": self.standin,
            "description": self.description, "needs_download": self.needs_download,
            "rotation": self.rotation, "corruption_set": self.corruption_set,
            "defaults": dict(self.defaults), "image_size": self.image_size, "display": self.display,
            "stands_in_for": self.stands_in_for, "standin_label": self.standin_label,
            "source": self.source, "data_keys": list(self.data_keys),
        }


def _vision(name, desc, image_size, display, val_size=None, val_fraction=0.1, corruption_set=None):
    d = {"val_fraction": val_fraction, "split_seed": 0}
    if val_size is not None:
        d["val_size"] = val_size
    return DatasetSpec(name, "vision", "image_classification", False, desc, True, True, corruption_set, d,
                       image_size, display, source=f"vision:{name.upper()}",
                       data_keys=("val_fraction", "val_size", "split_seed", "max_train", "allow_unverified"))


DATASETS: Dict[str, DatasetSpec] = {
    "mnist": _vision("mnist", "MNIST handwritten digits (LeCun et al.), 28x28 grey, via torchvision.",
                   28, "MNIST"),
    "fashion_mnist": _vision("fashion_mnist", "Fashion-MNIST (Xiao et al. 2017), 28x28 grey, via torchvision.",
                           28, "Fashion-MNIST"),
    "cifar10": _vision("cifar10", "CIFAR-10 (Krizhevsky 2009), 32x32 RGB, via torchvision.", 32, "CIFAR-10",
                       val_size=5000, corruption_set="cifar10c"),
    "cifar100": _vision("cifar100", "CIFAR-100 (Krizhevsky 2009), 32x32 RGB, 100 fine labels, via torchvision.", 32, "CIFAR-100",
                        val_size=5000),
    "svhn": _vision("svhn", "SVHN cropped digits (Netzer et al. 2011), 32x32 RGB, train+test (no extra), "
                            "via torchvision; label 10 in the .mat files means digit 0.", 32, "SVHN"),
    "ptb_pos": DatasetSpec(
        "ptb_pos", "nlp", "token_classification", False,
        "Penn Treebank WSJ POS tagging. Default: the free NLTK 10% WSJ sample (~3,914 sentences, "
        "seeded sentence split, 80/10/10 by default); option ptb_source='wsj_full' uses the licensed LDC "
        "Treebank-3 WSJ with the standard sections 0-18/19-21/22-24.",
        defaults={"max_len": 128, "ptb_source": "nltk_sample", "split_seed": 0, "min_freq": 1,
                  "val_fraction": 0.1, "test_fraction": 0.1}, display="PTB", source="nlp:PTB_POS",
        data_keys=("max_len", "ptb_source", "split_seed", "min_freq", "val_fraction", "test_fraction",
                   "unk_signatures", "max_train", "allow_unverified")),
    "sst2": DatasetSpec(
        "sst2", "nlp", "sequence_classification", False,
        "GLUE SST-2 binary sentiment (Socher et al. 2013). Test = the 872-sentence GLUE validation "
        "split (GLUE hides test labels); validation = seeded holdout of GLUE train.",
        defaults={"max_len": 64, "split_seed": 0, "val_fraction": 0.1, "min_freq": 1}, display="SST-2", source="nlp:SST2",
        data_keys=("max_len", "split_seed", "val_fraction", "val_size", "min_freq", "max_train", "allow_unverified")),
    "energy_efficiency": DatasetSpec(
        "energy_efficiency", "tabular", "regression", False,
        "UCI Energy Efficiency (Tsanas & Xifara 2012, UCI id 242): 768 buildings, 8 features, "
        "target heating load (Y1) or cooling load (Y2); seeded train/val/test split, 70/15/15 by default.",
        defaults={"target": "heating_load", "split_seed": 0, "val_fraction": 0.15, "test_fraction": 0.15},
        display="Energy Efficiency", source="tabular:ENERGY_EFFICIENCY",
        data_keys=("target", "split_seed", "val_fraction", "test_fraction", "max_train", "allow_unverified")),
    "california_housing": DatasetSpec(
        "california_housing", "tabular", "regression", False,
        "California Housing (Pace & Barry 1997) via scikit-learn: 20,640 block groups, 8 features, "
        "median house value in units of 100,000 USD; seeded train/val/test split, 80/10/10 by default.",
        defaults={"split_seed": 0, "val_fraction": 0.1, "test_fraction": 0.1}, display="California Housing",
        source="tabular:CALIFORNIA_HOUSING",
        data_keys=("split_seed", "val_fraction", "test_fraction", "max_train", "allow_unverified")),
    # ---- smoke stand-ins (offline) ----
    "smoke_digits": DatasetSpec(
        "smoke_digits", "vision", "image_classification", True,
        "STAND-IN (real data): scikit-learn's bundled 8x8 'digits' (UCI optdigits test set, 1,797 "
        "images, 1 channel, 0..16 rescaled to 0..255); stands in for the paper's vision sets. "
        "Seeded train/val/test split (split_note gives its sizes).",
        needs_download=False, rotation=True,
        defaults={"split_seed": 0, "val_fraction": 0.1, "test_fraction": 0.2}, image_size=8,
        stands_in_for="mnist", standin_label="MNIST-like vision", source="smoke:SMOKE_DIGITS",
        data_keys=("split_seed", "val_fraction", "test_fraction", "max_train")),
    "smoke_shapes32": DatasetSpec(
        "smoke_shapes32", "vision", "image_classification", True,
        "STAND-IN (generated): 32x32 RGB images of 8 classes of coloured shapes/textures on noisy "
        "backgrounds, generated deterministically from the seed; exercises the CIFAR code paths "
        "(corruptions, rotation).",
        needs_download=False, rotation=True, corruption_set="smoke_shapes32_c",
        defaults={"split_seed": 0, "n_train": 2000, "n_val": 500, "n_test": 500}, image_size=32,
        stands_in_for="cifar10", standin_label="CIFAR-10 (+C)", source="smoke:SMOKE_SHAPES32",
        data_keys=("n_train", "n_val", "n_test", "split_seed", "max_train")),
    "smoke_pos": DatasetSpec(
        "smoke_pos", "nlp", "token_classification", True,
        "STAND-IN (generated): POS-tagging corpus sampled from a small probabilistic grammar with "
        "ambiguous words (tag depends on context); stands in for PTB POS.",
        needs_download=False,
        defaults={"split_seed": 0, "n_sentences": 1500, "max_len": 40, "min_freq": 1,
                  "val_fraction": 0.15, "test_fraction": 0.15}, stands_in_for="ptb_pos", standin_label="PTB POS",
        source="smoke:SMOKE_POS",
        data_keys=("n_sentences", "split_seed", "val_fraction", "test_fraction", "max_len", "min_freq",
                   "unk_signatures", "max_train")),
    "smoke_sentiment": DatasetSpec(
        "smoke_sentiment", "nlp", "sequence_classification", True,
        "STAND-IN (generated): template sentiment sentences with negation and 'but' clauses, so "
        "word order matters; stands in for SST-2.",
        needs_download=False,
        defaults={"split_seed": 0, "n_sentences": 2000, "max_len": 32, "min_freq": 1,
                  "val_fraction": 0.15, "test_fraction": 0.15}, stands_in_for="sst2", standin_label="SST-2",
        source="smoke:SMOKE_SENTIMENT",
        data_keys=("n_sentences", "split_seed", "val_fraction", "test_fraction", "max_len", "min_freq", "max_train")),
    "smoke_diabetes": DatasetSpec(
        "smoke_diabetes", "tabular", "regression", True,
        "STAND-IN (real data): scikit-learn's bundled 'diabetes' regression set (442 patients, 10 "
        "features, target = disease progression after one year, original units); stands in for the "
        "paper's tabular sets. Seeded train/val/test split, 70/15/15 by default.",
        needs_download=False,
        defaults={"split_seed": 0, "val_fraction": 0.15, "test_fraction": 0.15}, standin_label="UCI tabular",
        source="tabular:SMOKE_DIABETES",
        data_keys=("split_seed", "val_fraction", "test_fraction", "max_train")),
}

PAPER_DATASETS: List[str] = [d for d, spec in DATASETS.items() if not spec.standin]
SMOKE_DATASETS: List[str] = [d for d, spec in DATASETS.items() if spec.standin]

# Corruption sets: derived from a processed vision dataset.
CORRUPTION_SETS: Dict[str, Dict[str, Any]] = {
    # "files": the DatasetSource of its official raw files (finding them under --from), as for a dataset
    "cifar10c": {"source": "cifar10", "official": True, "max_images": None, "display": "CIFAR-10-C",
                 "files": "corruption_sets:OFFICIAL_FILES"},
    "smoke_shapes32_c": {"source": "smoke_shapes32", "official": False, "max_images": 200,
                         "stands_in_for": "cifar10c", "standin_label": "CIFAR-10-C"},
}


def display_name(name: str) -> str:
    """How a dataset or corruption set is named in reports and figures."""
    if name in DATASETS:
        return DATASETS[name].display or name
    return CORRUPTION_SETS.get(name, {}).get("display") or name


def stands_in_for(name: str) -> Optional[str]:
    """The paper dataset a stand-in mirrors (None for a paper dataset)."""
    if name in DATASETS:
        return DATASETS[name].stands_in_for
    return CORRUPTION_SETS.get(name, {}).get("stands_in_for")


def standin_label(name: str) -> Optional[str]:
    if name in DATASETS:
        return DATASETS[name].standin_label
    return CORRUPTION_SETS.get(name, {}).get("standin_label")

# ---------------------------------------------------------------------------
# Published checksums: dataset -> {path relative to R/<dataset>/: (algorithm, hexdigest)}
# ---------------------------------------------------------------------------
CHECKSUMS: Dict[str, Dict[str, Tuple[str, str]]] = {
    # torchvision.datasets.MNIST.resources
    "mnist": {
        "MNIST/raw/train-images-idx3-ubyte.gz": ("md5", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        "MNIST/raw/train-labels-idx1-ubyte.gz": ("md5", "d53e105ee54ea40749a09fcbcd1e9432"),
        "MNIST/raw/t10k-images-idx3-ubyte.gz": ("md5", "9fb629c4189551a2d022fa330f9573f3"),
        "MNIST/raw/t10k-labels-idx1-ubyte.gz": ("md5", "ec29112dd5afa0611ce80d1b7f02629c"),
    },
    # torchvision.datasets.FashionMNIST.resources
    "fashion_mnist": {
        "FashionMNIST/raw/train-images-idx3-ubyte.gz": ("md5", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        "FashionMNIST/raw/train-labels-idx1-ubyte.gz": ("md5", "25c81989df183df01b3e8a0aad5dffbe"),
        "FashionMNIST/raw/t10k-images-idx3-ubyte.gz": ("md5", "bef4ecab320f06d8554ea6380940ec79"),
        "FashionMNIST/raw/t10k-labels-idx1-ubyte.gz": ("md5", "bb300cfdad3c16e7a12a480ee83cd310"),
    },
    # torchvision.datasets.CIFAR10 (tgz_md5, train_list, test_list, meta)
    "cifar10": {
        "cifar-10-python.tar.gz": ("md5", "c58f30108f718f92721af3b95e74349a"),
        "cifar-10-batches-py/data_batch_1": ("md5", "c99cafc152244af753f735de768cd75f"),
        "cifar-10-batches-py/data_batch_2": ("md5", "d4bba439e000b95fd0a9bffe97cbabec"),
        "cifar-10-batches-py/data_batch_3": ("md5", "54ebc095f3ab1f0389bbae665268c751"),
        "cifar-10-batches-py/data_batch_4": ("md5", "634d18415352ddfa80567beed471001a"),
        "cifar-10-batches-py/data_batch_5": ("md5", "482c414d41f54cd18b22e5b47cb7c3cb"),
        "cifar-10-batches-py/test_batch": ("md5", "40351d587109b95175f43aff81a1287e"),
        "cifar-10-batches-py/batches.meta": ("md5", "5ff9c542aee3614f3951f8cda6e48888"),
    },
    # torchvision.datasets.CIFAR100
    "cifar100": {
        "cifar-100-python.tar.gz": ("md5", "eb9058c3a382ffc7106e4002c42a8d85"),
        "cifar-100-python/train": ("md5", "16019d7e3df5f24257cddd939b257f8d"),
        "cifar-100-python/test": ("md5", "f0ef6b0ae62326f3e7ffdfab6717acfc"),
        "cifar-100-python/meta": ("md5", "7973b15100ade9c7d40fb424638fde48"),
    },
    # torchvision.datasets.SVHN.split_list
    "svhn": {
        "train_32x32.mat": ("md5", "e26dedcc434d2e4c54c9b2d4a06d8373"),
        "test_32x32.mat": ("md5", "eb5a983be6a315427106f1b164d9cef3"),
    },
    # sklearn.datasets._california_housing.ARCHIVE
    "california_housing": {
        "cal_housing.tgz": ("sha256", "aaa5c9a6afe2225cc2aed2723682ae403280c4a3695a2ddda4ffb5d8215ea681"),
    },
    # Zenodo record 2535967 (Hendrycks & Dietterich 2019)
    "cifar10c": {
        "CIFAR-10-C.tar": ("md5", "56bf5dcef84df0e2308c6dcbcbbd8499"),
    },
}

# SHA-256 of the files as distributed where the source publishes no digest of its own
# (recorded from the official downloads; see docs/data.md).
CHECKSUMS["sst2"] = {
    "SST-2/train.tsv": ("sha256", "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1"),
    "SST-2/dev.tsv": ("sha256", "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0"),
}
CHECKSUMS["ptb_pos"] = {
    "nltk_data/corpora/treebank.zip": ("sha256", "9da92d76c3666cfb6cddeaed0f7e86b344cce0f0928a286d439e555f19c37399"),
}
CHECKSUMS["energy_efficiency"] = {
    "ENB2012_data.xlsx": ("sha256", "ce80fba0fdf4be0e2f2e709fd01ff9c807246947fe666e18710d5105af7970b6"),
}
CHECKSUMS["california_housing"]["cal_housing.data"] = (
    "sha256", "d3d8a1a722ae78f91134862727d27a70b1415e7d512a89140406248687f4b902")

# MD5 of the uncompressed IDX files (what the content is, whatever the gzip container).
IDX_MD5: Dict[str, Dict[str, str]] = {
    "mnist": {
        "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
        "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
        "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
        "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
    },
    "fashion_mnist": {
        "train-images-idx3-ubyte": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
        "train-labels-idx1-ubyte": "9018921c3c673c538a1fc5bad174d6f9",
        "t10k-images-idx3-ubyte": "8181f5470baa50b63fa0f6fddb340f0a",
        "t10k-labels-idx1-ubyte": "15d484375f8d13e6eb1aabb0c3f46965",
    },
}

# Canonical content hashes (serialisations defined in integrity.py):
#   sst2 "<split>": sha256 over "sentence\tlabel\n" per row, in file order (GLUE train.tsv / dev.tsv);
#   ptb_pos "combined": sha256 over "<file name>\n<sha256 of file>\n" for the 199 wsj_*.mrg, sorted;
#   energy_efficiency "table": sha256 over rows of X1..X8,Y1,Y2 formatted "%.4f", comma-joined, "\n"-ended.
CONTENT_SHA256: Dict[str, Dict[str, str]] = {
    "sst2": {"train": "10a92a297ec38e262386e5a2713b4bc70e5d18ced88b7f54bd171a26e5b34ab5",
             "validation": "9a6c7403b71a9b762158387afe4431253ae10cdfb2319b5275289f3766f48291"},
    "ptb_pos": {"combined": "8476bc3b742a913aeea533eb81caa5edbbbf85d6690a97d1e19ec79ecb305246"},
    "energy_efficiency": {"table": "bff4ab11de21251633f2a0e624602b36ba867865947459679f193609ffac5fdc"},
}

URLS: Dict[str, Dict[str, str]] = {
    "california_housing": {"cal_housing.tgz": "https://ndownloader.figshare.com/files/5976036"},
    "cifar10c": {"CIFAR-10-C.tar": "https://zenodo.org/records/2535967/files/CIFAR-10-C.tar?download=1"},
    "energy_efficiency": {
        "energy+efficiency.zip": "https://archive.ics.uci.edu/static/public/242/energy+efficiency.zip",
        "ENB2012_data.xlsx": "https://archive.ics.uci.edu/ml/machine-learning-databases/00242/ENB2012_data.xlsx",
    },
}

# ---------------------------------------------------------------------------
# Where files go (printed by every "missing/corrupt" error). Paths relative to R/<dataset>/.
# ---------------------------------------------------------------------------
RAW_LAYOUT: Dict[str, str] = {
    "mnist": ("torchvision root = R/mnist. Put the four IDX files in R/mnist/MNIST/raw/: "
              "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, "
              "each gzipped (.gz, any gzip) or uncompressed; their uncompressed bytes are verified against the "
              "published MD5s."),
    "fashion_mnist": ("torchvision root = R/fashion_mnist. Put the four IDX files in "
                      "R/fashion_mnist/FashionMNIST/raw/ (same names as MNIST, .gz or uncompressed; Debian's "
                      "dataset-fashion-mnist package has them in /usr/share/datasets/fashion-mnist/)."),
    "cifar10": ("torchvision root = R/cifar10. Either R/cifar10/cifar-10-python.tar.gz or its extracted "
                "folder R/cifar10/cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta}."),
    "cifar100": ("torchvision root = R/cifar100. Either R/cifar100/cifar-100-python.tar.gz or its extracted "
                 "folder R/cifar100/cifar-100-python/{train,test,meta}."),
    "svhn": "torchvision root = R/svhn. Put R/svhn/train_32x32.mat and R/svhn/test_32x32.mat (cropped digits).",
    "ptb_pos": ("NLTK sample: R/ptb_pos/nltk_data/corpora/treebank.zip (the nltk_data package zip), or its "
                "extracted files R/ptb_pos/nltk_data/corpora/treebank/combined/wsj_0001.mrg .. wsj_0199.mrg. "
                "Full WSJ (LDC99T42, licensed, option ptb_source=wsj_full): "
                "R/ptb_pos/wsj/<section 00..24>/wsj_SSNN.mrg, i.e. the contents of treebank_3/parsed/mrg/wsj/."),
    "sst2": ("Any one of: the GLUE files R/sst2/SST-2/{train,dev}.tsv (sentence<TAB>label) or R/sst2/SST-2.zip; "
             "the Hugging Face nyu-mll/glue parquet R/sst2/sst2/{train,validation}-00000-of-00001.parquet "
             "(what `download` writes) or R/sst2/{train,validation}.parquet."),
    "energy_efficiency": ("R/energy_efficiency/ENB2012_data.xlsx (UCI id 242; columns X1..X8, Y1, Y2), or the "
                          "same table as R/energy_efficiency/ENB2012_data.csv, or the UCI zip "
                          "R/energy_efficiency/energy+efficiency.zip."),
    "california_housing": ("R/california_housing/cal_housing.tgz (the StatLib archive scikit-learn downloads) or "
                           "the data file inside it, R/california_housing/cal_housing.data. scikit-learn's "
                           "pickled cache cal_housing_py3.pkz is never read (unpickling runs code)."),
    "cifar10c": ("R/cifar10c/CIFAR-10-C/<corruption>.npy (15 files) + labels.npy, or the archive "
                 "R/cifar10c/CIFAR-10-C.tar (Zenodo record 2535967). If neither is present and Zenodo is "
                 "unreachable, the set is generated locally from the CIFAR-10 test set."),
}

# Hosts the downloaders contact: checked with a short TCP connect first, so an
# offline node fails in seconds instead of waiting out library retry back-offs.
DOWNLOAD_HOSTS: Dict[str, List[str]] = {
    "mnist": ["ossci-datasets.s3.amazonaws.com", "yann.lecun.com"],
    "fashion_mnist": ["fashion-mnist.s3-website.eu-central-1.amazonaws.com"],
    "cifar10": ["www.cs.toronto.edu"],
    "cifar100": ["www.cs.toronto.edu"],
    "svhn": ["ufldl.stanford.edu"],
    "ptb_pos": ["raw.githubusercontent.com"],
    "sst2": ["huggingface.co"],
    "energy_efficiency": ["archive.ics.uci.edu"],
    "california_housing": ["ndownloader.figshare.com"],
    "cifar10c": ["zenodo.org"],
}
for _n in SMOKE_DATASETS:
    RAW_LAYOUT[_n] = "nothing: generated offline / bundled with scikit-learn (download is a no-op)."


def get_spec(name: str) -> DatasetSpec:
    """Look a dataset up, with a helpful error for typos."""
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}") from None


def source_of(name: str):
    """The DatasetSource of a dataset (imports its family module: torch for vision, pandas for
    text) or of an official corruption set's raw files."""
    import importlib

    if name in CORRUPTION_SETS:
        ref = CORRUPTION_SETS[name].get("files")
        if not ref:
            raise KeyError(f"corruption set {name!r} has no raw files of its own (it is generated)")
    else:
        ref = get_spec(name).source
    module, attr = ref.split(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), attr)


def resolve_options(name: str, options: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Defaults of the dataset updated by user options (unknown keys are kept: recorded in meta)."""
    opts = dict(get_spec(name).defaults)
    opts.update(options or {})
    return opts
