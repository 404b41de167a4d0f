# One training run per dataset x method x seed. The run checkpoints every epoch
# and resumes when the job is rerun (after a kill, a preemption, a SLURM retry).


rule train:
    input:
        data=f"{R}/data/{{dataset}}",
    output:
        status=f"{R}/runs/{{dataset}}/{{method}}/seed{{seed}}/status.json",
    params:
        run_config=run_config_json,
    log:
        f"{R}/logs/train/{{dataset}}/{{method}}/seed{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/train/{{dataset}}/{{method}}/seed{{seed}}.tsv"
    threads: lambda w: rule_resources("train", "threads", 4)
    resources:
        gpu=lambda w: rule_resources("train", "gpu", 1),
        mem_mb=lambda w: rule_resources("train", "mem_mb", 16000),
        runtime=lambda w, attempt: rule_resources("train", "runtime", 720) * attempt,
    group:
        small_job_group
    conda:
        "../../envs/train.yaml"
    shell:
        # --record-divergence: a NaN loss ends the job cleanly with status
        # "diverged" (no metrics), so the report lists it instead of hiding it.
        "echo CUDA_VISIBLE_DEVICES=${{CUDA_VISIBLE_DEVICES:-unset}} > {log}; "
        "autonorm-train --run-config {params.run_config:q} --record-divergence --threads {threads} >> {log} 2>&1"
