# Statistics over seeds, figures and the report.


rule aggregate:
    input:
        evals=eval_files(),
    output:
        [f"{R}/tables/{t}" for t in TABLES],
    params:
        datasets=" ".join(DATASET_NAMES),
        methods=" ".join(METHOD_NAMES),
        seeds=" ".join(str(s) for s in SEEDS),
        reference=config.get("reference_method", "autonorm_s"),
        results=lambda w, input: str(Path(input.evals[0]).parents[3]),
        out_dir=lambda w, output: str(Path(output[0]).parent),
    log:
        f"{R}/logs/aggregate.log",
    conda:
        "../../envs/stats.yaml"
    shell:
        "autonorm-aggregate --results {params.results} --datasets {params.datasets} --methods {params.methods}"
        " --seeds {params.seeds} --reference-method {params.reference} --out-dir {params.out_dir} > {log} 2>&1"


rule figures:
    input:
        [f"{R}/tables/{t}" for t in TABLES],
    output:
        figure_outputs(),
    params:
        tables=lambda w, input: str(Path(input[0]).parent),
        out_dir=lambda w, output: str(Path(output[0]).parent),
    log:
        f"{R}/logs/figures.log",
    conda:
        "../../envs/plots.yaml"
    shell:
        "autonorm-figures --tables {params.tables} --out-dir {params.out_dir} > {log} 2>&1"


rule report:
    input:
        tables=[f"{R}/tables/{t}" for t in TABLES],
        figures=rules.figures.output,
    output:
        report(f"{R}/report.md", category="Report"),
    params:
        config_json=lambda w: json.dumps(config, sort_keys=True, default=str),
        tables=lambda w, input: str(Path(input.tables[0]).parent),
        figures=lambda w, input: str(Path(input.figures[0]).parent),
        runs=lambda w, output: str(Path(output[0]).parent / "runs"),
    log:
        f"{R}/logs/report.log",
    conda:
        "../../envs/stats.yaml"
    shell:
        "autonorm-report --tables {params.tables} --figures-dir {params.figures} --out {output}"
        " --config-json {params.config_json:q} --provenance-from {params.runs} > {log} 2>&1"
