# Shared helpers: config checks beyond the schema, paths, resources.
import json
from pathlib import Path

from autonorm.config import check_config, resolve_run_config, results_dir
from autonorm.data import CORRUPTION_SETS as CORRUPTION_SET_INFO
from autonorm.data import DATASETS
from autonorm.aggregate import TABLE_NAMES

# Cross-key checks (unknown dataset or method, missing dataset block) before any job runs.
check_config(config)

R = results_dir(config)
RAW = str(config["raw_dir"]).rstrip("/")
DATASET_NAMES = sorted(config["datasets"])
METHOD_NAMES = list(config["methods"])
SEEDS = [int(s) for s in config["seeds"]]
TABLES = list(TABLE_NAMES)
CORRUPTION_SETS = sorted({c for d, b in config["dataset_config"].items() if (c := b.get("corruptions"))})


wildcard_constraints:
    dataset="|".join(sorted(DATASETS)),
    corruption_set="|".join(["cifar10c", "smoke_shapes32_c"]),
    method=r"[a-z0-9_]+",
    seed=r"\d+",


localrules:
    download,
    download_corruptions,


def raw_root(marker):
    """The raw-data folder, from a dataset's marker file <raw_dir>/<dataset>/.complete."""
    return str(Path(marker).parents[1])


def dataset_block(dataset):
    return config["dataset_config"][dataset]


def family(dataset):
    return dataset_block(dataset)["family"]


def corruption_set(dataset):
    return dataset_block(dataset).get("corruptions")


def run_dir(dataset, method, seed):
    return f"{R}/runs/{dataset}/{method}/seed{seed}"


def run_config_json(wildcards):
    """The resolved run config, as a param: editing one dataset's block changes
    only that dataset's params, so only its jobs rerun."""
    cfg = resolve_run_config(config, wildcards.dataset, wildcards.method, int(wildcards.seed))
    return json.dumps(cfg, sort_keys=True)


def rule_resources(rule_name, key, default):
    return config.get("resources", {}).get(rule_name, {}).get(key, default)


def small_job_group(wildcards):
    """Pack small jobs (tabular and stand-in datasets) into SLURM group jobs;
    GPU-heavy vision/NLP runs stay one job each."""
    d = wildcards.dataset
    if DATASETS[d].standin or family(d) == "tabular":
        return "small"
    return None


def expand_runs(datasets=None):
    datasets = datasets or DATASET_NAMES
    return [f"{run_dir(d, m, s)}/status.json" for d in datasets for m in METHOD_NAMES for s in SEEDS]


def eval_files(datasets=None):
    datasets = datasets or DATASET_NAMES
    return [f"{R}/eval/{d}/{m}/seed{s}.json" for d in datasets for m in METHOD_NAMES for s in SEEDS]


def report_outputs():
    from autonorm.figures import FIGURE_NAMES

    return [f"{R}/report.md"] + [f"{R}/figures/{f}" for f in FIGURE_NAMES]


def evaluate_inputs(wildcards):
    inputs = {
        "status": f"{run_dir(wildcards.dataset, wildcards.method, wildcards.seed)}/status.json",
        "data": f"{R}/data/{wildcards.dataset}",
    }
    if corruption_set(wildcards.dataset):
        inputs["corruptions"] = f"{R}/corruptions/{corruption_set(wildcards.dataset)}"
    return inputs


def figure_outputs():
    from autonorm.figures import FIGURE_NAMES

    paths = [f"{R}/figures/{f}" for f in FIGURE_NAMES]
    # PNGs are registered for `snakemake --report`; PDFs are plain outputs.
    return [report(p, category="Figures") if p.endswith(".png") else p for p in paths]
