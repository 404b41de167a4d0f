# Data: download (login node: network), preprocess once per dataset, corruption sets.


rule download:
    output:
        f"{RAW}/{{dataset}}/.complete",
    params:
        raw_dir=lambda w, output: raw_root(output[0]),
    log:
        f"{R}/logs/download/{{dataset}}.log",
    conda:
        "../../envs/data.yaml"
    shell:
        "autonorm-data download --dataset {wildcards.dataset} --raw-dir {params.raw_dir} > {log} 2>&1"


rule preprocess:
    input:
        f"{RAW}/{{dataset}}/.complete",
    output:
        directory(f"{R}/data/{{dataset}}"),
    params:
        options=lambda w: json.dumps(dataset_block(w.dataset).get("data", {}), sort_keys=True),
        raw_dir=lambda w, input: raw_root(input[0]),
    log:
        f"{R}/logs/preprocess/{{dataset}}.log",
    benchmark:
        f"{R}/benchmarks/preprocess/{{dataset}}.tsv"
    threads: 1
    resources:
        mem_mb=lambda w: rule_resources("preprocess", "mem_mb", 8000),
        runtime=lambda w, attempt: rule_resources("preprocess", "runtime", 60) * attempt,
    conda:
        "../../envs/data.yaml"
    shell:
        "autonorm-data preprocess --dataset {wildcards.dataset} --raw-dir {params.raw_dir} --out {output}"
        " --options-json {params.options:q} > {log} 2>&1"


rule download_corruptions:
    # The official CIFAR-10-C release (login node: network), or files placed by
    # hand; when it is absent, make_corruptions generates the set locally and
    # the report says so. Generated-only sets (smoke) have nothing to fetch.
    output:
        f"{RAW}/{{corruption_set}}/.complete",
    params:
        official=lambda w: CORRUPTION_SET_INFO[w.corruption_set]["official"],
        raw_dir=lambda w, output: raw_root(output[0]),
    log:
        f"{R}/logs/download/{{corruption_set}}.log",
    conda:
        "../../envs/data.yaml"
    shell:
        # A failed download is not fatal here: make_corruptions re-checks the raw
        # folder (a corrupt user-placed file fails there) and otherwise generates.
        "if [ {params.official} = True ]; then"
        " autonorm-data download --dataset {wildcards.corruption_set} --raw-dir {params.raw_dir} > {log} 2>&1"
        " || echo 'official release unavailable: make_corruptions will generate it' >> {log};"
        " else echo 'generated set: nothing to download' > {log}; fi; touch {output}"


rule make_corruptions:
    input:
        raw=f"{RAW}/{{corruption_set}}/.complete",
        source=lambda w: f"{R}/data/{CORRUPTION_SET_INFO[w.corruption_set]['source']}",
    output:
        directory(f"{R}/corruptions/{{corruption_set}}"),
    params:
        raw_dir=lambda w, input: raw_root(input.raw),
    log:
        f"{R}/logs/corruptions/{{corruption_set}}.log",
    benchmark:
        f"{R}/benchmarks/corruptions/{{corruption_set}}.tsv"
    threads: 2
    resources:
        mem_mb=lambda w: rule_resources("make_corruptions", "mem_mb", 16000),
        runtime=lambda w, attempt: rule_resources("make_corruptions", "runtime", 240) * attempt,
    conda:
        "../../envs/data.yaml"
    shell:
        "autonorm-data corruptions --source {input.source} --raw-dir {params.raw_dir} --out {output}"
        " --no-download > {log} 2>&1"
