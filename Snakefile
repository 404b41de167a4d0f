# autonorm-repro: reproduces "AutoNorm: Understanding Adaptive Normalization in
# Transformers through Differentiable Gating" (2026) end to end.
#
#   snakemake all --cores 2 --configfile workflow/presets/smoke.yaml    # smoke DAG, CPU, minutes
#   snakemake --cores 8 --resources gpu=1 all                           # the paper's grid on a GPU box
#
# DAG: download -> preprocess (+ corruption sets) -> train (dataset x method x seed)
#      -> evaluate -> aggregate -> figures -> report

from snakemake.utils import min_version

from autonorm.config.workflow import check_config, read_yaml
from autonorm.workflow_support.checks import check_writable
from autonorm.workflow_support.console import failure_paragraphs, shorten_console

min_version("9.0")

# Read it ourselves first: Snakemake's message for a YAML syntax error names
# neither the file nor the line (`python -m autonorm.config.workflow FILE...` does both
# for --configfile files, which Snakemake reads before this file runs).
read_yaml("config.yaml")


configfile: "config.yaml"


# `--config seeds=[0,1]` hands Snakemake strings; seeds are integers.
if isinstance(config.get("seeds"), list):
    config["seeds"] = [int(s) if isinstance(s, str) and s.isdigit() else s for s in config["seeds"]]

# Schema and cross-key checks, so a malformed config fails before any job runs,
# with the key named. `device: cuda` is checked here when the jobs run on this
# machine; with an executor that sends them elsewhere (SLURM), the job checks.
check_config(config, check_device=workflow.local_exec and workflow.is_main_process)
# A real run, not a dry one (`workflow.dryrun` is not set yet while this file is read).
_real_run = workflow.is_main_process and not workflow.output_settings.dryrun
# An unwritable results folder in one paragraph, before Snakemake removes a job's old outputs.
if _real_run:
    check_writable(config["results_dir"])
# The console of a real run: one line per job, not Snakemake's block of files and resources
# (autonorm.workflow_support.console: its log file keeps every block; a dry run lists its jobs in
# full; --printshellcmds shows the commands; --verbose the blocks).
if _real_run and not workflow.output_settings.verbose:
    shorten_console()


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/aggregate.smk"


rule all:
    input:
        report_outputs(),
        # the runs and their evaluations too: Snakemake leaves a missing intermediate file alone
        # while the files after it exist, so without these a deleted status.json or evaluation
        # would not be remade, or would be remade without the tables and report after it
        expand_runs(),
        eval_files(),


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
            expand_runs(datasets=[_dataset]),


# What a person needs at the end: where the report is, or, when a job failed, that job's own
# message: the last lines of each failed job's log (autonorm.workflow_support.console; the whole log when short).
onsuccess:
    if Path(REPORT_MD).is_file():
        print(f"\nReport:  {REPORT_MD}\nFigures: {FIGURES_DIR}/\nTables:  {TABLES_DIR}/")


onerror:
    print(f"\n{failure_paragraphs(log)}")
    print(
        f"\nEach failed job's log is kept under {R}/logs/. Fix the cause and rerun the same command: finished jobs are "
        "kept, a killed training resumes from its last epoch."
    )
