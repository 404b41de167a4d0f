# Evaluation of every trained run: test metrics, rotation (vision), CIFAR-10-C
# (datasets whose block names a corruption set), cost.


rule evaluate:
    input:
        unpack(evaluate_inputs),
    output:
        f"{R}/eval/{{dataset}}/{{method}}/seed{{seed}}.json",
    log:
        f"{R}/logs/evaluate/{{dataset}}/{{method}}/seed{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/evaluate/{{dataset}}/{{method}}/seed{{seed}}.tsv"
    group:
        small_job_group
    conda:
        "../../envs/train.yaml"
    threads: lambda w: rule_resources("evaluate", "threads", 4)
    resources:
        gpu=lambda w: rule_resources("evaluate", "gpu", 1),
        # a resource, not a param: changing how runs share a GPU retrains nothing
        runs_per_gpu=RUNS_PER_GPU,
        mem_mb=lambda w: rule_resources("evaluate", "mem_mb", 16000),
        runtime=lambda w, attempt: rule_resources("evaluate", "runtime", 60) * attempt,
    params:
        run_dir=lambda w: run_dir(w.dataset, w.method, w.seed),
        # The hash of the run's resolved config: evaluation refuses a run folder
        # trained with other settings, and a changed setting reruns evaluation.
        config_hash=expected_config_hash,
        corruptions=lambda w, input: ["--corruptions", input.corruptions] if "corruptions" in input.keys() else [],
        batch_size=config.get("evaluation", {}).get("corruption_batch_size", 1000),
        severity=config.get("evaluation", {}).get("corruption_severity", 3),
    shell:
        "export AUTONORM_RUNS_PER_GPU={resources.runs_per_gpu}; autonorm-evaluate --run-dir {params.run_dir:q} --data-dir {input.data:q} {params.corruptions:q}"
        " --out {output:q} --batch-size {params.batch_size} --severity {params.severity}"
        " --expected-config-hash {params.config_hash:q} --threads {threads} > {log:q} 2>&1"


# A run that is the same training as another: its eval file is the trained run's, under its own
# name, with "same_run_as" (the report shows both rows, marked, and skips the test between them).
ruleorder: same_run_eval > evaluate


localrules:
    same_run_eval,


rule same_run_eval:
    input:
        same_run_primary_eval,
    output:
        f"{R}/eval/{{same_run}}/seed{{seed}}.json",
    log:
        f"{R}/logs/evaluate/{{same_run}}/seed{{seed}}.same_run.log",
    wildcard_constraints:
        same_run=same_run_constraint(),
    run:
        write_same_run_eval_file(wildcards, input, output, log)
