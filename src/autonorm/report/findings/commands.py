"""The commands a ledger row names where no study here tested its claim (one place for each)."""
from __future__ import annotations

#: the paper grid on a GPU box, one dataset at a time
GPU_CMD = "snakemake all --cores 16 --resources gpu=1 --config 'datasets=[{d}]' report_name={d}_only"
#: the whole paper grid (config.yaml) on a GPU box: a claim across datasets
PAPER_GRID_CMD = "snakemake all --cores 16 --resources gpu=1"
#: the paper's datasets a CPU can train (the laptop preset has them, every method, 3 seeds)
LAPTOP_DATASETS = ("mnist", "fashion_mnist", "ptb_pos", "sst2", "energy_efficiency", "california_housing")
LAPTOP_CMD = "snakemake all --cores 2 --configfile workflow/presets/laptop.yaml"
#: the datasets a 2-core CPU trains in the paper's regime, with their presets
REGIME_PRESETS = {"mnist": "mnist_patch4", "fashion_mnist": "fmnist_regime", "california_housing": "california_depth"}
REGIME_CMD = "snakemake all --cores 2 --configfile workflow/presets/{preset}.yaml"
ABLATION_CMD = ("snakemake all --cores 2 --configfile workflow/presets/laptop.yaml --config "
                "'ablations={{\"datasets\": [{d}], \"variants\": [{v}]}}'")
ABLATION_GPU_CMD = "snakemake all --cores 8 --resources gpu=1 --configfile workflow/presets/ablations.yaml"
WHY_GPU = {"cifar10": "needs the CIFAR-10 download and GPU-length training",
           "cifar100": "needs the CIFAR-100 download and GPU-length training",
           "svhn": "needs the SVHN download and GPU-length training",
           "cifar10c": "needs CIFAR-10, CIFAR-10-C and GPU-length training"}


def command_for(d: str) -> str:
    """The command that would test a claim on dataset ``d`` here."""
    if d in REGIME_PRESETS:
        return REGIME_CMD.format(preset=REGIME_PRESETS[d])
    return LAPTOP_CMD if d in LAPTOP_DATASETS else GPU_CMD.format(d=d)
