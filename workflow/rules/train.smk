# One training run per dataset x method x seed. The run checkpoints every epoch
# and resumes when the job is rerun (after a kill, a preemption, a SLURM retry).


rule train:
    input:
        data=f"{R}/data/{{dataset}}",
        teacher=teacher_status,  # distillation variants only: the teacher run trains first
    output:
        status=f"{R}/runs/{{dataset}}/{{method}}/seed{{seed}}/status.json",
    log:
        # This attempt's log. Snakemake deletes a job's log before every attempt,
        # so each attempt is also appended to <log>.attempts.log, which keeps the
        # log of an attempt that failed.
        f"{R}/logs/train/{{dataset}}/{{method}}/seed{{seed}}.log",
    benchmark:
        f"{R}/benchmarks/train/{{dataset}}/{{method}}/seed{{seed}}.tsv"
    group:
        small_job_group
    conda:
        "../../envs/train.yaml"
    threads: lambda w: rule_resources("train", "threads", 4)
    resources:
        gpu=lambda w: rule_resources("train", "gpu", 1),
        # a resource, not a param: changing how runs share a GPU retrains nothing
        runs_per_gpu=RUNS_PER_GPU,
        mem_mb=lambda w: rule_resources("train", "mem_mb", 16000),
        runtime=lambda w, attempt: rule_resources("train", "runtime", 720) * attempt,
    params:
        # The resolved settings: a changed setting reruns this run (and its evaluation).
        run_config=run_config_json,
        attempts_log=lambda w: f"{R}/logs/train/{w.dataset}/{w.method}/seed{w.seed}.attempts.log",
    shell:
        # --record-divergence: a NaN loss ends the job cleanly with status
        # "diverged" (no metrics), so the report lists it instead of hiding it.
        'export AUTONORM_RUNS_PER_GPU={resources.runs_per_gpu}; {{ echo "=== attempt started $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)'
        ' SLURM_JOB_ID=${{SLURM_JOB_ID:-none}} CUDA_VISIBLE_DEVICES=${{CUDA_VISIBLE_DEVICES:-unset}}";'
        " autonorm-train --run-config {params.run_config:q} --record-divergence --threads {threads}; }}"
        " 2>&1 | tee -a {params.attempts_log:q} > {log:q}"
