# Evaluation of every trained run: test metrics, rotation (vision), CIFAR-10-C
# (datasets whose block names a corruption set), cost.


rule evaluate:
    input:
        unpack(evaluate_inputs),
    output:
        f"{R}/eval/{{dataset}}/{{method}}/seed{{seed}}.json",
    params:
        run_dir=lambda w: run_dir(w.dataset, w.method, w.seed),
        corruptions=lambda w, input: f"--corruptions {input.corruptions}" if "corruptions" in input.keys() else "",
        batch_size=config.get("evaluation", {}).get("corruption_batch_size", 1000),
        severity=config.get("evaluation", {}).get("corruption_severity", 3),
        threads=lambda w: rule_resources("evaluate", "threads", 4),
    log:
        f"{R}/logs/evaluate/{{dataset}}/{{method}}/seed{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/evaluate/{{dataset}}/{{method}}/seed{{seed}}.tsv"
    threads: lambda w: rule_resources("evaluate", "threads", 4)
    resources:
        gpu=lambda w: rule_resources("evaluate", "gpu", 1),
        mem_mb=lambda w: rule_resources("evaluate", "mem_mb", 16000),
        runtime=lambda w, attempt: rule_resources("evaluate", "runtime", 60) * attempt,
    group:
        small_job_group
    conda:
        "../../envs/train.yaml"
    shell:
        "autonorm-evaluate --run-dir {params.run_dir} --data-dir {input.data} {params.corruptions}"
        " --out {output} --batch-size {params.batch_size} --severity {params.severity}"
        " --threads {threads} > {log} 2>&1"
