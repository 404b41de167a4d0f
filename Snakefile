# autonorm-repro: reproduces "AutoNorm: Understanding Adaptive Normalization in
# Transformers through Differentiable Gating" (2026) end to end.
#
#   snakemake all --cores 2 --configfile workflow/presets/smoke.yaml    # smoke DAG, CPU, minutes
#   snakemake --cores 8 --resources gpu=1 all                           # the paper's grid on a GPU box
#
# DAG: download -> preprocess (+ corruption sets) -> train (dataset x method x seed)
#      -> evaluate -> aggregate -> figures -> report
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


# `--config seeds=[0,1]` hands Snakemake strings; seeds are integers.
if isinstance(config.get("seeds"), list):
    config["seeds"] = [int(s) if isinstance(s, str) and s.isdigit() else s for s in config["seeds"]]

# Schema first, so a malformed config fails before any job runs.
validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/aggregate.smk"


rule all:
    input:
        report_outputs(),


rule all_runs:
    input:
        expand_runs(),


# A named target per dataset: `snakemake --cores 8 dataset_cifar10` trains and
# evaluates every method x seed of one dataset.
for _dataset in config["datasets"]:

    rule:
        name:
            f"dataset_{_dataset}"
        input:
            eval_files(datasets=[_dataset]),
