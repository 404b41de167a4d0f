"""Study records (analysis.records): a results folder as committed data. A record gives the same
tables as its results folder, regenerates the findings page byte for byte, merges parts, and
refuses a damaged file, another schema, a duplicate run, a config difference or other code;
``--record`` into a part that exists refuses to drop or change its runs unless ``--replace`` (which
carries the runs the folder lacks over), and ``--cpu`` names the CPU of runs that record none. The
rules of a study folder and of a run counted once across studies: test_study_folders.py."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from autonorm import report
from autonorm.analysis import study_folders, record_runs, records

COMPARED = ("summary.csv", "comparisons.csv", "ablations.csv", "gates.csv", "history.csv", "freeze.csv",
            "corruptions.csv", "datasets.csv", "baselines.csv")


@pytest.fixture(scope="module")
def paper(paper_results, paper_tables):
    """The session's paper-shaped results folder (read-only: tests copy what they change) and its tables."""
    return paper_results, paper_tables


def _csv(df: pd.DataFrame) -> str:
    return df.to_csv(index=False, float_format="%.10g")


def test_record_gives_the_results_folders_tables(paper, tmp_path):
    root, tables = paper
    records.write_record(root, tmp_path / "studies" / "paper" / "part1", "paper")
    from_record = records.tables_of(study_folders.load_study(tmp_path / "studies" / "paper"))
    for name in COMPARED:
        assert _csv(from_record[name]) == _csv(tables[name]), name
    runs_a, runs_b = from_record["runs.csv"], tables["runs.csv"]
    assert list(runs_a.status) == list(runs_b.status) and "stale" in set(runs_a.status)


def test_record_has_no_weights_and_names_its_provenance(paper, tmp_path):
    root, _ = paper
    part = records.write_record(root, tmp_path / "paper" / "p", "paper", command="test")
    names = {p.name for p in part.iterdir()}
    assert not any(n.endswith((".pt", ".npy")) for n in names)
    manifest = json.loads((part / "manifest.json").read_text())
    assert manifest["schema_version"] == records.SCHEMA_VERSION and manifest["command"] == "test"
    assert set(manifest["files"]) == names - {"manifest.json"}
    rec = records.read_part(part)
    assert set(rec["provenance"].columns) >= {"git_commit", "host", "torch", "data_identity", "training_code"}
    assert "out_dir" not in next(iter(rec["configs"].values()))  # paths are not a run's identity


def test_same_record_twice_is_the_same_bytes(paper, tmp_path):
    root, _ = paper
    a = records.write_record(root, tmp_path / "a" / "p", "paper")
    b = records.write_record(root, tmp_path / "b" / "p", "paper")
    for name in json.loads((a / "manifest.json").read_text())["files"]:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_findings_from_records_are_byte_identical_on_regeneration(paper, tmp_path):
    root, _ = paper
    records.write_record(root, tmp_path / "studies" / "paper" / "p", "paper")
    pages = []
    for k in (1, 2):
        out, figs = tmp_path / f"docs{k}" / "findings.md", tmp_path / f"docs{k}" / "findings"
        assert report.main(["--findings", "--studies-dir", str(tmp_path / "studies"), "--out", str(out),
                            "--figures-dir", str(figs)]) == 0
        pages.append((out.read_text().replace(f"docs{k}", "docs"),
                      {p.name: p.read_bytes() for p in sorted(figs.glob("*.png"))}))
    assert pages[0] == pages[1]
    text = pages[0][0]
    assert "from the study records" in text and "recorded in 1 part(s)" in text
    assert pages[0][1], "no figure drawn"


def test_findings_from_a_record_equal_findings_from_its_results(paper, tmp_path, monkeypatch):
    from autonorm.report.findings import figures

    root, _ = paper
    monkeypatch.setattr(figures, "FIGURES", ())  # the ledger's text is compared (the figures: the test above)
    records.write_record(root, tmp_path / "studies" / "paper" / "p", "paper")
    out = {}
    for how, study in (("record", tmp_path / "studies" / "paper"), ("results", root)):
        page = tmp_path / how / "findings.md"
        assert report.main(["--findings", "--study", f"paper={study}", "--out", str(page),
                            "--figures-dir", str(tmp_path / how / "f")]) == 0
        text = page.read_text()
        out[how] = text[text.index("## Claims ledger"):]
    assert out["record"] == out["results"]


def _split_results(root: Path, dest: Path, seeds: set[int]) -> Path:
    """A copy of the results folder holding only some seeds (one sitting's share)."""
    shutil.copytree(root, dest)
    for sub in ("runs", "eval"):
        for p in list((dest / sub).glob("*/*/seed*")):
            if int(p.name[4:].split(".")[0]) not in seeds:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    shutil.rmtree(dest / "tables", ignore_errors=True)
    return dest


def test_parts_merge_to_the_whole(paper, tmp_path):
    root, tables = paper
    a = _split_results(root, tmp_path / "a", {0, 1})
    b = _split_results(root, tmp_path / "b", {2})
    records.write_record(a, tmp_path / "studies" / "paper" / "day1", "paper")
    records.write_record(b, tmp_path / "studies" / "paper" / "day2", "paper")
    merged = records.tables_of(study_folders.load_study(tmp_path / "studies" / "paper"))
    # the seeds-in-parts record lacks the whole folder's summary.csv (method order from the registry)
    for name in ("summary.csv", "comparisons.csv"):
        key = ["dataset", "method_b" if name == "comparisons.csv" else "method", "metric"]
        x = merged[name].sort_values(key).reset_index(drop=True)
        y = tables[name].sort_values(key).reset_index(drop=True)
        assert _csv(x) == _csv(y), name


def test_duplicate_run_in_two_parts_is_refused(paper, tmp_path):
    root, _ = paper
    records.write_record(root, tmp_path / "s" / "x" / "one", "x")
    records.write_record(root, tmp_path / "s" / "x" / "two", "x")
    with pytest.raises(records.RecordError, match=r"is in two parts of the study"):
        study_folders.load_study(tmp_path / "s" / "x")


def _edit_part(part: Path, name: str, fn) -> None:
    """Change one file of a part and record its new checksum (as a careless hand edit would not)."""
    data = fn(gzip.decompress((part / name).read_bytes()))
    (part / name).write_bytes(records._gzip(data))
    manifest = json.loads((part / "manifest.json").read_text())
    import hashlib
    manifest["files"][name] = hashlib.sha256((part / name).read_bytes()).hexdigest()
    (part / "manifest.json").write_text(json.dumps(manifest))


def test_config_difference_other_than_seed_is_refused(paper, tmp_path):
    root, _ = paper
    a = records.write_record(_split_results(root, tmp_path / "a", {0, 1}), tmp_path / "s" / "x" / "a", "x")
    b = records.write_record(_split_results(root, tmp_path / "b", {2}), tmp_path / "s" / "x" / "b", "x")
    del a

    def change_lr(data: bytes) -> bytes:
        cfgs = json.loads(data)
        for key, cfg in cfgs.items():
            if key.startswith("mnist/frozen_ln/"):
                cfg["autonorm"]["tau"] = 2.0
        return json.dumps(cfgs).encode()

    _edit_part(b, "configs.json.gz", change_lr)
    with pytest.raises(records.RecordError, match=r"mnist/frozen_ln differ in more than the seed.*autonorm\.tau"):
        study_folders.load_study(tmp_path / "s" / "x")


def test_runs_of_other_training_code_are_refused(paper, tmp_path):
    root, _ = paper
    records.write_record(_split_results(root, tmp_path / "a", {0, 1}), tmp_path / "s" / "x" / "a", "x")
    b = records.write_record(_split_results(root, tmp_path / "b", {2}), tmp_path / "s" / "x" / "b", "x")
    a = tmp_path / "s" / "x" / "a"
    for part, code in ((a, "c0de1"), (b, "c0de2")):
        _edit_part(part, "provenance.csv.gz",
                   lambda data, c=code: pd.read_csv(pd.io.common.BytesIO(data)).assign(training_code=c)
                   .to_csv(index=False).encode())
    with pytest.raises(records.RecordError, match="trained by different code"):
        study_folders.load_study(tmp_path / "s" / "x")


def test_distilled_runs_merge_across_seeds_and_a_retrained_teacher_is_refused(paper, tmp_path):
    """A distilled run names its seed's teacher by config hash, which differs from seed to seed:
    that is not a config difference; a student whose teacher was retrained after it is refused."""
    root, _ = paper
    parts = [records.write_record(_split_results(root, tmp_path / n, seeds), tmp_path / "s" / "x" / n, "x")
             for n, seeds in (("a", {0, 1}), ("b", {2}))]

    def with_hashes(data: bytes) -> bytes:  # the teacher's config hash, one per seed
        prov = pd.read_csv(pd.io.common.BytesIO(data))
        prov["config_hash"] = [f"{m}-{s}" for m, s in zip(prov.method, prov.seed)]
        return prov.to_csv(index=False).encode()

    def distilled(teacher_hash):
        def edit(data: bytes) -> bytes:
            cfgs = json.loads(data)
            for key, cfg in cfgs.items():
                if key.startswith("mnist/autonorm_s/"):
                    seed = int(key.rsplit("seed", 1)[1])
                    cfg["distill"] = {"teacher": "teacher_mlp", "teacher_config_hash": teacher_hash(seed),
                                      "temperature": 4.0, "weight": 0.5}
            return json.dumps(cfgs).encode()
        return edit

    for part in parts:
        _edit_part(part, "provenance.csv.gz", with_hashes)
        _edit_part(part, "configs.json.gz", distilled(lambda seed: f"teacher_mlp-{seed}"))
    study_folders.load_study(tmp_path / "s" / "x")  # the seed's own teacher: merges
    _edit_part(parts[1], "configs.json.gz", distilled(lambda seed: "an-older-teacher"))
    with pytest.raises(records.RecordError, match=r"b: mnist/autonorm_s/seed2 was distilled from a teacher of "
                                                  r"config hash an-older-teacher.*mnist/teacher_mlp/seed2"):
        study_folders.load_study(tmp_path / "s" / "x")


def test_hand_edited_file_is_refused_naming_it(paper, tmp_path):
    root, _ = paper
    part = records.write_record(root, tmp_path / "s" / "x" / "p", "x")
    data = gzip.decompress((part / "values.csv.gz").read_bytes()).replace(b"98.", b"99.", 1)
    (part / "values.csv.gz").write_bytes(gzip.compress(data))
    with pytest.raises(records.RecordError, match=r"values\.csv\.gz was changed after it was recorded"):
        study_folders.load_study(tmp_path / "s" / "x")
    (part / "values.csv.gz").unlink()
    with pytest.raises(records.RecordError, match=r"values\.csv\.gz is missing"):
        study_folders.load_study(tmp_path / "s" / "x")


def test_other_schema_version_is_refused_naming_it(paper, tmp_path):
    root, _ = paper
    part = records.write_record(root, tmp_path / "s" / "x" / "p", "x")
    manifest = json.loads((part / "manifest.json").read_text())
    (part / "manifest.json").write_text(json.dumps(manifest | {"schema_version": 99}))
    with pytest.raises(records.RecordError, match="schema version 99; this version of the package reads version 1"):
        study_folders.load_study(tmp_path / "s" / "x")


def test_record_command_line_refuses_a_conflicting_part_and_keeps_the_study(paper, tmp_path, capsys):
    root, _ = paper
    studies = tmp_path / "studies"
    args = ["--record", "paper", "--results", str(root), "--studies-dir", str(studies)]
    assert report.main(args + ["--part", "one"]) == 0
    assert "KiB" in capsys.readouterr().out
    assert report.main(args + ["--part", "two"]) != 0  # the same runs again: a duplicate
    assert "is in two parts" in capsys.readouterr().err
    assert [p.name for p in study_folders.parts_of(studies / "paper")] == ["one"]  # nothing half-written
    study_folders.load_study(studies / "paper")


def test_a_folder_recorded_sitting_by_sitting_skips_what_the_study_holds(paper, tmp_path, capsys):
    """One results folder that goes on from sitting to sitting: day 1 recorded seeds 0-1; on day 2
    the folder holds seeds 0-2 and ``--skip-recorded`` records seed 2 alone (seeds 0-1 checked to be
    the same runs), so the study is the whole and nothing is counted twice."""
    root, tables = paper
    studies = tmp_path / "studies"
    day1 = _split_results(root, tmp_path / "day1", {0, 1})
    args = ["--record", "paper", "--studies-dir", str(studies)]
    assert report.main(args + ["--results", str(day1), "--part", "day1"]) == 0
    n_day1 = len(record_runs.finished_runs(study_folders.load_study(studies / "paper")))
    assert f"the study has {n_day1} finished or diverged runs in 1 part(s)" in capsys.readouterr().out
    assert report.main(args + ["--results", str(root), "--part", "day2"]) != 0  # without the flag: duplicates
    assert "is in two parts" in capsys.readouterr().err
    assert report.main(args + ["--results", str(root), "--part", "day2", "--skip-recorded"]) == 0
    # the count the message gives is the study's finished runs, seed 2's now among them
    n_all = len(record_runs.finished_runs(study_folders.load_study(studies / "paper")))
    assert n_all > n_day1 and f"the study has {n_all} finished or diverged runs in 2 part(s)" in capsys.readouterr().out
    day2 = records.read_part(studies / "paper" / "day2")
    finished = day2["runs"][day2["runs"].status.isin(record_runs.FINISHED)]
    assert set(finished.seed) == {2} and set(day2["provenance"].seed) == {2}
    assert all(k.endswith("seed2") for k in day2["configs"])
    merged = records.tables_of(study_folders.load_study(studies / "paper"))
    key = ["dataset", "method", "metric"]
    assert _csv(merged["summary.csv"].sort_values(key).reset_index(drop=True)) == \
        _csv(tables["summary.csv"].sort_values(key).reset_index(drop=True))
    # nothing new: said, and nothing written
    assert report.main(args + ["--results", str(day1), "--part", "day3", "--skip-recorded"]) != 0
    assert "nothing new to record" in capsys.readouterr().err
    assert [p.name for p in study_folders.parts_of(studies / "paper")] == ["day1", "day2"]


def _shift_first_test_metrics(results: Path, delta: float) -> Path:
    """Add ``delta`` to every test metric of the first seed-0 evaluation (a retrained run's other
    numbers); returns that evaluation file."""
    ev = next(p for p in sorted((results / "eval").glob("*/*/seed0.json")))
    obj = json.loads(ev.read_text())
    obj["test"] = {k: (v + delta if isinstance(v, (int, float)) else v) for k, v in obj["test"].items()}
    ev.write_text(json.dumps(obj))
    return ev


def test_skip_recorded_refuses_a_run_that_differs_from_its_recorded_self(paper, tmp_path, capsys):
    """A run of the same name that was retrained (other numbers) is not a duplicate to skip: refused,
    naming the run."""
    root, _ = paper
    studies = tmp_path / "studies"
    args = ["--record", "paper", "--studies-dir", str(studies)]
    assert report.main(args + ["--results", str(root), "--part", "day1"]) == 0
    again = tmp_path / "again"
    shutil.copytree(root, again)
    ev = _shift_first_test_metrics(again, 1.0)
    assert report.main(args + ["--results", str(again), "--part", "day2", "--skip-recorded"]) != 0
    err = capsys.readouterr().err
    d, m = ev.parent.parent.name, ev.parent.name
    assert f"run {d}/{m}/seed0 is recorded with other numbers" in err, err
    assert [p.name for p in study_folders.parts_of(studies / "paper")] == ["day1"]


def test_a_folder_with_no_finished_run_writes_no_part(paper, tmp_path, capsys):
    """Runs still training (no metrics yet) make no part: before, a part of "missing" rows alone
    was written and counted as one of the study's parts."""
    root, _ = paper
    training = tmp_path / "training"
    shutil.copytree(root, training)
    shutil.rmtree(training / "eval")
    for p in (training / "runs").glob("*/*/seed*/metrics.json"):
        p.unlink()
    studies = tmp_path / "studies"
    args = ["--record", "paper", "--results", str(training), "--studies-dir", str(studies), "--part", "early"]
    assert report.main(args) != 0
    assert "no run in it has finished" in capsys.readouterr().err
    assert not (studies / "paper" / "early").exists()


def _set_cpu(results: Path, cpu: str) -> None:
    for run in results.glob("runs/*/*/seed*/"):
        env = run / "env.json"
        obj = json.loads(env.read_text()) if env.is_file() else {}
        env.write_text(json.dumps(obj | {"cpu": cpu}))


def test_a_run_resumed_on_another_cpu_or_thread_count_is_refused_naming_both(paper, tmp_path, capsys):
    """A run trained to epoch 5 on one machine and resumed on another holds floats rounded two ways (its
    env.json's ``earlier_attempts``): no part is written, and the refusal names the run and both settings."""
    root, _ = paper
    results = tmp_path / "results"
    shutil.copytree(root, results)
    _set_cpu(results, "CPU One, torch AVX2")
    run = sorted(results.glob("runs/*/*/seed*/"))[0]
    env = json.loads((run / "env.json").read_text())
    one = {"cpu": "CPU One, torch AVX2", "torch_threads": env.get("torch_threads"), "resumed_from_epoch": None}
    studies = tmp_path / "studies"
    args = ["--record", "paper", "--studies-dir", str(studies), "--results", str(results)]
    (run / "env.json").write_text(json.dumps(env | {"earlier_attempts": [one]}))   # one setting: fine
    assert report.main(args + ["--part", "one"]) == 0
    two = one | {"cpu": "CPU Two, torch AVX512"}
    (run / "env.json").write_text(json.dumps(env | {"earlier_attempts": [one, two]}))
    assert report.main(args + ["--part", "two"]) != 0
    err = capsys.readouterr().err
    assert str(run / "env.json") in err and "'CPU One, torch AVX2'" in err and "'CPU Two, torch AVX512'" in err
    assert not (studies / "paper" / "two").exists()
    threads = one | {"torch_threads": 2}
    (run / "env.json").write_text(json.dumps(env | {"earlier_attempts": [threads]}))
    assert report.main(args + ["--part", "three"]) != 0
    assert "at 2 threads" in capsys.readouterr().err


def test_a_run_retrained_on_another_cpu_is_refused_naming_both_cpus(paper, tmp_path, capsys):
    """Two CPUs may round floats otherwise, so a run retrained on another one comes out other: the
    refusal says on which CPUs the two were trained (provenance.csv.gz column ``cpu``)."""
    root, _ = paper
    day1, again = tmp_path / "day1", tmp_path / "again"
    shutil.copytree(root, day1)
    _set_cpu(day1, "CPU One, torch AVX2")
    studies = tmp_path / "studies"
    args = ["--record", "paper", "--studies-dir", str(studies)]
    assert report.main(args + ["--results", str(day1), "--part", "day1"]) == 0
    rec = records.read_part(studies / "paper" / "day1")
    assert set(rec["provenance"]["cpu"]) == {"CPU One, torch AVX2"}
    shutil.copytree(day1, again)
    _set_cpu(again, "CPU Two, torch AVX512")
    _shift_first_test_metrics(again, 0.01)
    assert report.main(args + ["--results", str(again), "--part", "day2", "--skip-recorded"]) != 0
    err = capsys.readouterr().err
    assert "recorded from a run on CPU One, torch AVX2, this folder's ran on CPU Two, torch AVX512" in err, err


def test_a_part_recorded_before_the_cpu_column_reads_with_the_cpu_unknown(paper, tmp_path):
    root, _ = paper
    old = records.write_record(_split_results(root, tmp_path / "a", {0, 1}), tmp_path / "s" / "x" / "a", "x")
    records.write_record(_split_results(root, tmp_path / "b", {2}), tmp_path / "s" / "x" / "b", "x")
    _edit_part(old, "provenance.csv.gz",
               lambda data: pd.read_csv(pd.io.common.BytesIO(data)).drop(columns="cpu").to_csv(index=False).encode())
    prov = records.read_part(old)["provenance"]
    assert list(prov.columns) == record_runs.PROVENANCE_COLUMNS and prov["cpu"].isna().all()
    merged = records.tables_of(study_folders.load_study(tmp_path / "s" / "x"))
    assert set(merged["runs.csv"].seed) == {0, 1, 2}


def test_a_method_trained_in_a_later_part_keeps_its_place_in_the_tables(paper, tmp_path):
    """Parts merge with methods in the registry's (config.yaml's) order: a study whose last sitting
    trained unfrozen AutoNorm listed it after AdaNorm, in its tables and its figure panels."""
    root, _ = paper
    first = _split_results(root, tmp_path / "a", {0, 1, 2})
    for sub in ("runs", "eval"):
        for p in list((first / sub).glob("*/autonorm")):
            shutil.rmtree(p)
    later = _split_results(root, tmp_path / "b", {0, 1, 2})
    for sub in ("runs", "eval"):
        for p in list((later / sub).glob("*/*")):
            if p.name != "autonorm":
                shutil.rmtree(p)
    records.write_record(first, tmp_path / "s" / "x" / "a", "x")
    records.write_record(later, tmp_path / "s" / "x" / "b", "x")
    study = study_folders.load_study(tmp_path / "s" / "x")
    methods = study["grid"]["methods"]
    assert methods.index("random") < methods.index("autonorm") < methods.index("autonorm_s") < methods.index("adanorm")
    mnist = records.tables_of(study)["summary.csv"].query("dataset == 'mnist'").method.drop_duplicates().tolist()
    assert mnist.index("random") < mnist.index("autonorm") < mnist.index("adanorm"), mnist


def _finished(part: Path) -> list[str]:
    return [record_runs.run_name(k) for k in sorted(record_runs.finished_runs(records.read_part(part)))]


def test_recording_into_a_part_that_holds_more_runs_is_refused_and_replace_carries_them(paper, tmp_path, capsys):
    """Before: the part was replaced (its seed-2 runs lost) with one line said. Now refused, listing
    the runs it would drop; --replace carries them into the new part, --drop leaves one out."""
    root, _ = paper
    studies = tmp_path / "studies"
    part = studies / "paper" / "p"
    args = ["--record", "paper", "--studies-dir", str(studies), "--part", "p"]
    assert report.main(args + ["--results", str(root)]) == 0
    whole = _finished(part)
    tables = records.tables_of(study_folders.load_study(studies / "paper"))
    seed2 = [r for r in whole if r.endswith("/seed2")]
    before = (part / "manifest.json").read_bytes()
    day1 = _split_results(root, tmp_path / "day1", {0, 1})
    capsys.readouterr()
    assert report.main(args + ["--results", str(day1)]) != 0
    assert (f"{part} is a recorded part of {len(whole)} runs; recording this results folder into it would drop "
            f"{len(seed2)} of its runs ({', '.join(seed2)}): pass --replace to replace it (the runs it drops are "
            "carried over; --drop RUN leaves one out), or record another --part") in capsys.readouterr().err
    assert (part / "manifest.json").read_bytes() == before
    assert report.main(args + ["--results", str(day1), "--drop", seed2[0]]) != 0
    assert (f"--drop {seed2[0]} goes with --replace (it names runs of the part replaced)"
            in capsys.readouterr().err)
    other = ["--record", "paper", "--studies-dir", str(studies), "--part", "q", "--results", str(day1)]
    assert report.main(other + ["--replace", "--drop", seed2[0]]) != 0
    assert f"--drop {seed2[0]}: {studies / 'paper' / 'q'} holds no recorded part to replace" in capsys.readouterr().err
    assert report.main(args + ["--results", str(day1), "--replace", "--drop", whole[0]]) != 0
    assert (f"--drop {whole[0]}: the results folder holds it: --drop leaves out only runs of the old part that "
            "the folder lacks") in capsys.readouterr().err
    assert (part / "manifest.json").read_bytes() == before
    assert report.main(args + ["--results", str(day1), "--replace"]) == 0
    assert f"carrying over {', '.join(seed2)}" in capsys.readouterr().out
    manifest = json.loads((part / "manifest.json").read_text())
    assert _finished(part) == whole and manifest["carried"] == seed2
    assert manifest["command"].endswith("--part p --replace")
    assert len(records.read_part(part)["datasets"]) == len(records.read_part(part)["datasets"].dataset.unique())
    carried = records.tables_of(study_folders.load_study(studies / "paper"))
    key = ["dataset", "method", "metric"]
    assert _csv(carried["summary.csv"].sort_values(key).reset_index(drop=True)) == \
        _csv(tables["summary.csv"].sort_values(key).reset_index(drop=True))
    assert report.main(args + ["--results", str(day1), "--replace", "--drop", seed2[0]]) == 0
    assert _finished(part) == [r for r in whole if r != seed2[0]]
    assert json.loads((part / "manifest.json").read_text())["carried"] == seed2[1:]


def test_recording_into_a_part_runs_of_other_numbers_is_refused_listing_them(paper, tmp_path, capsys):
    root, _ = paper
    studies = tmp_path / "studies"
    args = ["--record", "paper", "--studies-dir", str(studies), "--part", "p"]
    assert report.main(args + ["--results", str(root)]) == 0
    assert report.main(args + ["--results", str(root)]) == 0  # the same runs again: nothing lost
    again = tmp_path / "again"
    shutil.copytree(root, again)
    ev = _shift_first_test_metrics(again, 1.0)
    run = f"{ev.parent.parent.name}/{ev.parent.name}/seed0"
    n = len(_finished(studies / "paper" / "p"))
    capsys.readouterr()
    assert report.main(args + ["--results", str(again)]) != 0
    assert (f"{studies / 'paper' / 'p'} is a recorded part of {n} runs; recording this results folder into it "
            f"would change 1 ({run}): pass --replace") in capsys.readouterr().err


def test_record_cpu_fills_in_the_cpu_of_runs_that_record_none(paper, tmp_path, capsys):
    """Runs trained by code older than env.json's "cpu" key: --cpu names their CPU at record time
    (noted in the manifest); a run that records another CPU is refused."""
    root, _ = paper
    old = tmp_path / "old"
    shutil.copytree(root, old)
    studies = tmp_path / "studies"
    cpu = "Intel(R) Xeon(R) Processor, torch AVX2"
    args = ["--record", "paper", "--studies-dir", str(studies), "--results", str(old), "--cpu", cpu]
    assert report.main(args + ["--part", "a"]) == 0
    rec = records.read_part(studies / "paper" / "a")
    assert set(rec["provenance"]["cpu"]) == {cpu}
    manifest = json.loads((studies / "paper" / "a" / "manifest.json").read_text())
    assert manifest["cpu_declared"] == {cpu: sorted(_finished(studies / "paper" / "a"))}
    assert manifest["command"].endswith(f"--part a --cpu '{cpu}'")
    n = len(manifest["cpu_declared"][cpu])
    assert f"cpu '{cpu}' declared for {n} runs whose env.json records none" in capsys.readouterr().out
    env = old / rec["runs"][rec["runs"].status.isin(record_runs.FINISHED)].path.iloc[0] / "env.json"
    env.write_text(json.dumps((json.loads(env.read_text()) if env.is_file() else {})
                              | {"cpu": "AMD EPYC 7B13, torch AVX512"}))
    capsys.readouterr()
    assert report.main(args + ["--part", "b"]) != 0
    assert (f"{env} records the cpu 'AMD EPYC 7B13, torch AVX512', and --cpu declares '{cpu}': --cpu fills in only "
            "runs that record none; record this run without --cpu, or the others as another part"
            in capsys.readouterr().err)
    assert not (studies / "paper" / "b").exists()


def test_recording_into_a_part_folder_without_its_manifest_needs_replace(paper, tmp_path, capsys):
    root, _ = paper
    studies = tmp_path / "studies"
    part = studies / "paper" / "p"
    args = ["--record", "paper", "--studies-dir", str(studies), "--part", "p", "--results", str(root)]
    assert report.main(args) == 0
    (part / "manifest.json").unlink()
    capsys.readouterr()
    assert report.main(args) != 0
    assert (f"{part}: record files and no manifest.json: restore it (git checkout -- '{part / 'manifest.json'}') or "
            "pass --replace to record this part anew (its old files are not read)") in capsys.readouterr().err
    assert not (part / "manifest.json").exists()
    assert report.main(args + ["--replace"]) == 0
    (read,) = study_folders.load_study(studies / "paper")["parts"]
    assert read == ("p", len(_finished(part))) and read[1] > 0


def test_records_and_its_command_line_do_not_import_each_other():
    """analysis.records (the record's data) is imported by analysis.record_cli (the command line), never the
    other way: the page and the tests read records without the command line's imports."""
    import ast
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "autonorm" / "analysis" / "records.py"
    imported = {n.module for n in ast.walk(ast.parse(src.read_text())) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(ast.parse(src.read_text())) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m.endswith("record_cli") for m in imported), imported
