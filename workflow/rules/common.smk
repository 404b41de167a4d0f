# Shared helpers: paths, resources, the report's grid. The config was checked
# (schema and cross-key checks) in the Snakefile before this file is read.
import json
from pathlib import Path

from autonorm.config.run_config import resolve_run_config, results_dir, teacher_run_dir
from autonorm.config.workflow import check_report_grid
from autonorm.data import CORRUPTION_SETS as CORRUPTION_SET_INFO
from autonorm.data import DATASETS
from autonorm.output_names import FIGURE_NAMES, TABLE_NAMES
from autonorm.config.variants import active_variants, same_runs, variant_datasets

R = results_dir(config)
RAW = str(config["raw_dir"]).rstrip("/")
DATASET_NAMES = sorted(config["datasets"])
METHOD_NAMES = list(config["methods"])
SEEDS = [int(s) for s in config["seeds"]]
TABLES = list(TABLE_NAMES)
CORRUPTION_SETS = sorted({c for d, b in config["dataset_config"].items() if (c := b.get("corruptions"))})

# The report of this invocation's grid. Without report_name it is the main
# report (<results>/report.md, tables/, figures/); with report_name=<name> it
# lands in <results>/reports/<name>/, beside the main one (README "Partial reruns").
REPORT_NAME = config.get("report_name")
REPORT_DIR = f"{R}/reports/{REPORT_NAME}" if REPORT_NAME else R
TABLES_DIR = f"{REPORT_DIR}/tables"
FIGURES_DIR = f"{REPORT_DIR}/figures"
REPORT_MD = f"{REPORT_DIR}/report.md"
REPORT_LOGS = f"{R}/logs/reports/{REPORT_NAME}" if REPORT_NAME else f"{R}/logs"
REPORT_BENCHMARKS = f"{R}/benchmarks/reports/{REPORT_NAME}" if REPORT_NAME else f"{R}/benchmarks"
GRID = {"datasets": DATASET_NAMES, "methods": sorted(METHOD_NAMES), "seeds": sorted(SEEDS)}

# Method variants (the paper's ablations: config keys `variants` and `ablations`), each on the
# datasets it runs on, with the grid's seeds. Runs whose resolved run configs differ only in their
# names are the same training (AutoNorm-S on a family that never freezes is AutoNorm): SAME_RUN maps
# each such run to the one that trains; the same_run_eval rule gives it that run's eval file, marked.
VARIANT_NAMES = active_variants(config)
VARIANT_RUNS = [(d, v) for v in VARIANT_NAMES for d in variant_datasets(config, v)]
SAME_RUN = same_runs(config)
GRID["variants"] = sorted(f"{d}/{v}" for d, v in VARIANT_RUNS)  # a report's grid includes its variant rows

# Data options that change what is fetched or accepted (the download rule's params).
DOWNLOAD_OPTION_KEYS = ("allow_unverified", "ptb_source")


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


_PLANNED_SOURCES = {}


def planned_corruption_source(wildcards):
    """'official' or 'generated': what building the corruption set would use now (the
    release placed or its host reachable). A param of the corruption rules, so a set
    generated offline is rebuilt from the official release once that is available."""
    from autonorm.data.corruption_sets import planned_source

    name = wildcards.corruption_set
    if name not in _PLANNED_SOURCES:  # one network probe per invocation
        _PLANNED_SOURCES[name] = planned_source(name, RAW)
    return _PLANNED_SOURCES[name]


def download_options(dataset):
    data = dataset_block(dataset).get("data", {}) if dataset in config["dataset_config"] else {}
    return {k: data[k] for k in DOWNLOAD_OPTION_KEYS if k in data}


def download_from(dataset):
    """`--from DIR` for the download step when config `raw_from` names a local folder for the dataset."""
    src = config.get("raw_from", {}).get(dataset)
    return ["--from", str(src)] if src else []


def run_config_json(wildcards):
    """The resolved run config, as a param: editing one dataset's block changes
    only that dataset's params, so only its jobs rerun."""
    cfg = resolve_run_config(config, wildcards.dataset, wildcards.method, int(wildcards.seed))
    return json.dumps(cfg, sort_keys=True)


# autonorm.run.device packs this many GPU jobs per GPU; the GPU rules export it to their job's shell.
RUNS_PER_GPU = int(config.get("runtime", {}).get("runs_per_gpu", 1))


def rule_resources(rule_name, key, default):
    return config.get("resources", {}).get(rule_name, {}).get(key, default)


def small_job_group(wildcards):
    """Pack small jobs (tabular and stand-in datasets) into SLURM group jobs;
    GPU-heavy vision/NLP runs stay one job each."""
    d = wildcards.dataset
    if DATASETS[d].standin or family(d) == "tabular":
        return "small"
    return None


def grid_runs(datasets=None):
    """(dataset, run name) of the grid: every dataset x method, then the variants on their datasets."""
    datasets = datasets or DATASET_NAMES
    return [(d, m) for d in datasets for m in METHOD_NAMES + [v for dv, v in VARIANT_RUNS if dv == d]]


def expand_runs(datasets=None):
    # a run that is the same training as another (SAME_RUN) is not trained again
    return [f"{run_dir(d, m, s)}/status.json" for d, m in grid_runs(datasets) if (d, m) not in SAME_RUN for s in SEEDS]


def eval_files(datasets=None):
    return [f"{R}/eval/{d}/{m}/seed{s}.json" for d, m in grid_runs(datasets) for s in SEEDS]


def teacher_status(wildcards):
    """A distillation variant's teacher run (its status.json), so the DAG trains the teacher
    first and a rerun teacher reruns its students; [] for every other run."""
    teacher = teacher_run_dir(config, wildcards.dataset, wildcards.method, int(wildcards.seed))
    return [f"{teacher}/status.json"] if teacher else []


def same_run_constraint():
    """A regex that matches exactly the '<dataset>/<run name>' pairs in SAME_RUN (nothing when empty)."""
    import re

    return "|".join(re.escape(f"{d}/{n}") for d, n in sorted(SAME_RUN)) or "(?!)"


def same_run_primary_eval(wildcards):
    d, n = wildcards.same_run.split("/")
    return f"{R}/eval/{d}/{SAME_RUN[(d, n)]}/seed{wildcards.seed}.json"


def write_same_run_eval_file(wildcards, input, output, log):
    """The same_run_eval job: the trained run's eval file under this run's name, marked."""
    from autonorm.config.variants import write_same_run_eval

    from autonorm.io_utils import verify_model_file

    d, n = wildcards.same_run.split("/")
    # the trained run's model must be the one its evaluation read (a damaged model.pt stops here)
    verify_model_file(run_dir(d, SAME_RUN[(d, n)], wildcards.seed))
    write_same_run_eval(input[0], output[0], config, n, SAME_RUN[(d, n)])
    Path(log[0]).write_text(f"{output[0]}: the eval file of {input[0]} (the same training), marked same_run_as\n")


def guarded_eval_files(wildcards):
    """The aggregate rule's inputs, after refusing (while the DAG is built, before
    any job) to overwrite a report made for another grid."""
    check_report_grid(f"{TABLES_DIR}/grid.json", GRID, REPORT_NAME)
    return eval_files()


def expected_config_hash(wildcards):
    from autonorm.provenance import run_config_hash

    return run_config_hash(resolve_run_config(config, wildcards.dataset, wildcards.method, int(wildcards.seed)))


def report_outputs():
    return [REPORT_MD] + [f"{FIGURES_DIR}/{f}" for f in FIGURE_NAMES]


def evaluate_inputs(wildcards):
    inputs = {
        "status": f"{run_dir(wildcards.dataset, wildcards.method, wildcards.seed)}/status.json",
        "data": f"{R}/data/{wildcards.dataset}",
    }
    if corruption_set(wildcards.dataset):
        inputs["corruptions"] = f"{R}/corruptions/{corruption_set(wildcards.dataset)}"
    return inputs


def figure_outputs():
    paths = [f"{FIGURES_DIR}/{f}" for f in FIGURE_NAMES]
    # PNGs are registered for `snakemake --report`; PDFs are plain outputs.
    return [report(p, category="Figures") if p.endswith(".png") else p for p in paths]
