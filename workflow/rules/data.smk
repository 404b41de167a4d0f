# Data: download (login node: network), preprocess once per dataset, corruption sets.
# Every path is quoted in the shell ({...:q}): results_dir and raw_dir may hold
# spaces or shell characters and must never be run as code.


rule download:
    output:
        f"{RAW}/{{dataset}}/.complete",
    log:
        f"{R}/logs/download/{{dataset}}.log",
    conda:
        "../../envs/data.yaml"
    params:
        raw_dir=lambda w, output: raw_root(output[0]),
        # Only the options that change what is fetched or accepted, so tuning
        # a preprocessing option does not re-download.
        options=lambda w: json.dumps(download_options(w.dataset), sort_keys=True),
        # config `raw_from`: take the files from a local folder instead of the internet
        from_dir=lambda w: download_from(w.dataset),
    shell:
        "autonorm-data download --dataset {wildcards.dataset:q} --raw-dir {params.raw_dir:q}"
        " --options-json {params.options:q} {params.from_dir:q} > {log:q} 2>&1"


rule preprocess:
    input:
        f"{RAW}/{{dataset}}/.complete",
    output:
        directory(f"{R}/data/{{dataset}}"),
    log:
        f"{R}/logs/preprocess/{{dataset}}.log",
    benchmark:
        f"{R}/benchmarks/preprocess/{{dataset}}.tsv"
    conda:
        "../../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=lambda w: rule_resources("preprocess", "mem_mb", 8000),
        runtime=lambda w, attempt: rule_resources("preprocess", "runtime", 60) * attempt,
    params:
        options=lambda w: json.dumps(dataset_block(w.dataset).get("data", {}), sort_keys=True),
        raw_dir=lambda w, input: raw_root(input[0]),
    shell:
        "autonorm-data preprocess --dataset {wildcards.dataset:q} --raw-dir {params.raw_dir:q} --out {output:q}"
        " --options-json {params.options:q} > {log:q} 2>&1"


rule download_corruptions:
    # The official CIFAR-10-C release (login node: network), or files placed by
    # hand; when it is absent, make_corruptions generates the set locally and
    # the report says so. Generated-only sets (smoke) have nothing to fetch.
    # The marker does not freeze that choice: `planned` changes when the release
    # becomes available, which reruns this rule and make_corruptions.
    output:
        f"{RAW}/{{corruption_set}}/.complete",
    log:
        f"{R}/logs/download/{{corruption_set}}.log",
    conda:
        "../../envs/data.yaml"
    params:
        official=lambda w: CORRUPTION_SET_INFO[w.corruption_set]["official"],
        planned=planned_corruption_source,
        raw_dir=lambda w, output: raw_root(output[0]),
    shell:
        # A failed download is not fatal here: make_corruptions re-checks the raw
        # folder (a corrupt user-placed file fails there) and otherwise generates.
        "if [ {params.official:q} = True ]; then"
        " autonorm-data download --dataset {wildcards.corruption_set:q} --raw-dir {params.raw_dir:q} > {log:q} 2>&1"
        " || echo 'official release unavailable: make_corruptions will generate it' >> {log:q};"
        " else echo 'generated set: nothing to download' > {log:q}; fi;"
        " echo planned source: {params.planned:q} >> {log:q}; touch {output:q}"


rule make_corruptions:
    input:
        raw=f"{RAW}/{{corruption_set}}/.complete",
        source=lambda w: f"{R}/data/{CORRUPTION_SET_INFO[w.corruption_set]['source']}",
    output:
        directory(f"{R}/corruptions/{{corruption_set}}"),
    log:
        f"{R}/logs/corruptions/{{corruption_set}}.log",
    benchmark:
        f"{R}/benchmarks/corruptions/{{corruption_set}}.tsv"
    # Before the training jobs where both could start: a CPU training job also evaluates its run on
    # the set when the set is already built, and its evaluate job then starts no torch (eval_cache).
    priority: 10
    conda:
        "../../envs/data.yaml"
    # one generating process per thread (a generated set makes its 15 corruptions independently)
    threads: lambda w: rule_resources("make_corruptions", "threads", 2)
    resources:
        mem_mb=lambda w: rule_resources("make_corruptions", "mem_mb", 16000),
        runtime=lambda w, attempt: rule_resources("make_corruptions", "runtime", 240) * attempt,
    params:
        raw_dir=lambda w, input: raw_root(input.raw),
        planned=planned_corruption_source,
    shell:
        "autonorm-data corruptions --source {input.source:q} --raw-dir {params.raw_dir:q} --out {output:q}"
        " --no-download --workers {threads} > {log:q} 2>&1"
