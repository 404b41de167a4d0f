# Statistics over seeds, figures and the report, for the grid of this
# invocation (datasets x methods x seeds). The grid is recorded in
# <tables>/grid.json; a smaller or different grid may not overwrite a report
# (README "Partial reruns"): name it with --config report_name=<name>.


rule aggregate:
    input:
        evals=guarded_eval_files,
    output:
        tables=[f"{TABLES_DIR}/{t}" for t in TABLES],
        grid=f"{TABLES_DIR}/grid.json",
    log:
        f"{REPORT_LOGS}/aggregate.log",
    benchmark:
        f"{REPORT_BENCHMARKS}/aggregate.tsv"
    conda:
        "../../envs/stats.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        datasets=DATASET_NAMES,
        methods=METHOD_NAMES,
        seeds=SEEDS,
        reference=config.get("reference_method", "autonorm_s"),
        results=lambda w, input: str(Path(input.evals[0]).parents[3]),
        out_dir=lambda w, output: str(Path(output.tables[0]).parent),
        grid=json.dumps(GRID, sort_keys=True),
    shell:
        "autonorm-aggregate --results {params.results:q} --datasets {params.datasets:q} --methods {params.methods:q}"
        " --seeds {params.seeds:q} --reference-method {params.reference:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"
        " && printf '%s\\n' {params.grid:q} > {output.grid:q}.tmp && mv {output.grid:q}.tmp {output.grid:q}"


rule figures:
    input:
        [f"{TABLES_DIR}/{t}" for t in TABLES],
    output:
        # each PNG with its caption for `snakemake --report` (workflow/report/<stem>.rst)
        [
            report(str(p), caption=f"../report/{Path(str(p)).stem}.rst", category="Figures") if str(p).endswith(".png") else p
            for p in figure_outputs()
        ],
    log:
        f"{REPORT_LOGS}/figures.log",
    benchmark:
        f"{REPORT_BENCHMARKS}/figures.tsv"
    conda:
        "../../envs/plots.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        tables=lambda w, input: str(Path(input[0]).parent),
        out_dir=lambda w, output: str(Path(output[0]).parent),
    shell:
        "autonorm-figures --tables {params.tables:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"


rule report:
    input:
        tables=[f"{TABLES_DIR}/{t}" for t in TABLES],
        grid=f"{TABLES_DIR}/grid.json",
        figures=rules.figures.output,
    output:
        md=REPORT_MD,
        # report.md as one page, so it opens inside the `snakemake --report` HTML
        html=report(str(Path(REPORT_MD).with_suffix(".html")), caption="../report/report.rst", category="Report"),
    log:
        f"{REPORT_LOGS}/report.log",
    benchmark:
        f"{REPORT_BENCHMARKS}/report.tsv"
    conda:
        "../../envs/stats.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        config_json=lambda w: json.dumps(config, sort_keys=True, default=str),
        tables=lambda w, input: str(Path(input.tables[0]).parent),
        figures=lambda w, input: str(Path(input.figures[0]).parent),
        runs=lambda w: f"{R}/runs",
    shell:
        "autonorm-report --tables {params.tables:q} --figures-dir {params.figures:q} --out {output.md:q}"
        " --html-out {output.html:q}"
        " --config-json {params.config_json:q} --provenance-from {params.runs:q} > {log:q} 2>&1"
