"""Study folders (analysis.study_folders): nothing under studies/ changes the findings page without a
word. Each case is built from a copy of the committed records (studies/mnist_regime, its 16-epoch
pilot, fmnist_regime's README-only folder): a part whose manifest is lost, a part's files copied into
the study folder, a study copied under another name, a run in two parts (the same or differing),
the same run in two studies (refused unless one study declares the other its source, and then
counted once), and the page's header, which lists every part it read with its runs."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from autonorm.analysis import record_runs, records
from autonorm.analysis import study_folders as sf

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ROOT / "studies"
DECLARE = "{\"sources\": [\"mnist_regime\"]}"


#: mnist_regime's parts of seeds 0-2 (18 runs): the cases below are built from these, so their counts
#: and messages stay as they are while the study grows
MNIST_REGIME_0_2 = ("2026-12-02-seed0", "2026-12-02-seed1-a", "2026-12-02-teacher", "2026-12-03-autonorm-a",
                    "2026-12-03-autonorm-b", "2026-12-03-seed1-b", "2026-12-03-seed2-a", "2026-12-03-seed2-b")


def _copy(tmp_path: Path, *names: str) -> Path:
    """The committed study folders ``names`` copied into tmp_path/studies (returned); of mnist_regime,
    its README and its parts of seeds 0-2."""
    dest = tmp_path / "studies"
    for name in names:
        if name == "mnist_regime":
            (dest / name).mkdir(parents=True)
            shutil.copy(STUDIES / name / "README.md", dest / name / "README.md")
            for part in MNIST_REGIME_0_2:
                shutil.copytree(STUDIES / name / part, dest / name / part)
        else:
            shutil.copytree(STUDIES / name, dest / name)
    return dest


def _rename_study(study: Path, name: str) -> Path:
    """A study copied under another name and its manifests made to say so (as a careful copy would)."""
    new = study.parent / name
    shutil.copytree(study, new)
    for m in new.glob("*/manifest.json"):
        m.write_text(json.dumps(json.loads(m.read_text()) | {"study": name}))
    return new


def _load_all(studies: Path) -> list[sf.Recorded]:
    return sf.load_studies([(p.name, p) for p in sf.study_folders(studies)])


def test_a_part_without_its_manifest_is_refused_naming_it(tmp_path):
    """Before: the part was skipped and the study lost its 2 runs, without a word."""
    studies = _copy(tmp_path, "mnist_regime")
    part = studies / "mnist_regime" / "2026-12-03-seed2-a"
    (part / "manifest.json").unlink()
    want = (f"{part}: record files (baselines.csv.gz, configs.json.gz, corruptions.csv.gz, datasets.csv.gz, "
            "datasets.json.gz, freeze.csv.gz, gates.csv.gz, history.csv.gz, provenance.csv.gz, runs.csv.gz, "
            "values.csv.gz) and no manifest.json, so its runs would not be counted: restore the manifest "
            f"(git checkout -- '{part / 'manifest.json'}') or record the part again (autonorm-report --record "
            "mnist_regime --results FOLDER --part 2026-12-03-seed2-a --replace)")
    for load in (lambda: sf.load_study(studies / "mnist_regime"), lambda: _load_all(studies)):
        with pytest.raises(records.RecordError) as e:
            load()
        assert str(e.value) == want


def test_a_parts_files_copied_into_the_study_folder_are_refused(tmp_path):
    """Before: the study folder's own manifest made the study that one part (4 runs of 18)."""
    studies = _copy(tmp_path, "mnist_regime")
    study = studies / "mnist_regime"
    for f in (study / "2026-12-02-seed0").iterdir():
        shutil.copy2(f, study / f.name)
    with pytest.raises(records.RecordError) as e:
        _load_all(studies)
    assert str(e.value) == (
        f"{study}: record files directly in the study folder (baselines.csv.gz, configs.json.gz, "
        "corruptions.csv.gz, datasets.csv.gz, datasets.json.gz, freeze.csv.gz, gates.csv.gz, history.csv.gz, "
        "manifest.json, provenance.csv.gz, runs.csv.gz, values.csv.gz): a study folder holds parts (sub-folders "
        "with a manifest.json) and a README; move them back into their part folder (git checkout restores a "
        "committed one) or record the part again")


def test_a_readme_only_study_is_no_study_and_other_files_are_left_alone(tmp_path):
    studies = _copy(tmp_path, "mnist_regime", "fmnist_regime")
    (studies / "mnist_regime" / "notes.txt").write_text("a note\n")
    (studies / "mnist_regime" / "2026-12-02-seed0" / "notes.txt").write_text("a note\n")
    (studies / "mnist_regime" / "drafts").mkdir()
    assert sf.parts_of(studies / "fmnist_regime") == []
    assert [p.name for p in sf.study_folders(studies)] == ["mnist_regime"]
    (study,) = _load_all(studies)
    assert len(study.record["parts"]) == 8 and sum(n for _, n in study.record["parts"]) == 18


def test_a_study_copied_under_another_name_is_refused(tmp_path):
    """Before: `studies/mnist_regime copy/` (byte-identical) was a second study: rows counted twice."""
    studies = _copy(tmp_path, "mnist_regime")
    copy = studies / "mnist_regime copy"
    shutil.copytree(studies / "mnist_regime", copy)
    with pytest.raises(records.RecordError) as e:
        _load_all(studies)
    assert str(e.value) == (
        f"{copy / '2026-12-02-seed0' / 'manifest.json'} records study 'mnist_regime', part '2026-12-02-seed0', "
        "but sits in study folder 'mnist_regime copy', part folder '2026-12-02-seed0': a part or study copied "
        "or renamed by hand; move it back to mnist_regime/2026-12-02-seed0, or record it again into this study")
    shutil.rmtree(copy)
    part = studies / "mnist_regime" / "2026-12-02-seed0"
    part.rename(part.with_name("seed0"))
    with pytest.raises(records.RecordError, match=r"records study 'mnist_regime', part '2026-12-02-seed0', but "
                                                  r"sits in study folder 'mnist_regime', part folder 'seed0'"):
        sf.load_study(studies / "mnist_regime")


def test_a_copy_renamed_in_its_manifests_is_refused_as_the_same_runs(tmp_path):
    studies = _copy(tmp_path, "mnist_regime")
    _rename_study(studies / "mnist_regime", "mnist_regime_again")
    with pytest.raises(records.RecordError) as e:
        _load_all(studies)
    assert str(e.value) == (
        "run mnist/frozen_ln/seed0 of study mnist_regime and run mnist/frozen_ln/seed0 of study mnist_regime_again "
        "are the same run (config hash 701f5b84db5bff33, data identity 4b883b71abf16b4f, seed 0) (and 17 more runs "
        "the two studies share): a run counts once; remove one study's copy, or, if mnist_regime_again repeats "
        f"mnist_regime's runs, declare it in {(studies / 'mnist_regime_again' / 'study.json').as_posix()}: "
        f"{DECLARE}")


def test_the_pilot_that_repeats_a_run_of_mnist_regime_counts_once_only_when_declared(tmp_path):
    """studies/mnist_regime_pilot_e16 is mnist_regime's frozen_ln seed 0 (trained twice, by two
    versions of the training code, to the same numbers): refused without its study.json; with it,
    the run counts once, in mnist_regime, and the page judges no claim on the pilot."""
    studies = _copy(tmp_path, "mnist_regime", "mnist_regime_pilot_e16")
    declaration = studies / "mnist_regime_pilot_e16" / "study.json"
    assert json.loads(declaration.read_text()) == {"sources": ["mnist_regime"]}  # the committed one
    declaration.unlink()
    with pytest.raises(records.RecordError) as e:
        _load_all(studies)
    assert str(e.value) == (
        "run mnist/frozen_ln/seed0 of study mnist_regime and run mnist/frozen_ln/seed0 of study "
        "mnist_regime_pilot_e16 are the same run (config hash 701f5b84db5bff33, data identity 4b883b71abf16b4f, "
        "seed 0; trained twice, by training code d1df9a83 and 46759892): a run counts once; remove one study's "
        "copy, or, if mnist_regime_pilot_e16 repeats mnist_regime's runs, declare it in "
        f"{declaration.as_posix()}: {DECLARE}")
    declaration.write_text(DECLARE + "\n")
    regime, pilot = _load_all(studies)
    assert regime.repeats == [] and regime.counted() is regime.record
    assert pilot.repeats == [("mnist/frozen_ln/seed0", "mnist_regime", "mnist/frozen_ln/seed0")]
    assert pilot.counted() is None
    from autonorm.report.findings.studies import find_studies

    found = find_studies(None, studies, tmp_path / "scratch")
    assert [(st.name, st.judged() is st, st.judged() is None) for st in found] == \
        [("mnist_regime", True, False), ("mnist_regime_pilot_e16", False, True)]


def test_a_declared_source_drops_only_the_runs_it_holds(tmp_path):
    """A study that repeats some runs of its source is judged on the rest."""
    studies = _copy(tmp_path, "mnist_regime")
    again = _rename_study(studies / "mnist_regime", "again")
    teachers = studies / "teachers"
    (teachers / "t").parent.mkdir()
    shutil.copytree(studies / "mnist_regime" / "2026-12-02-teacher", teachers / "t")
    (teachers / "t" / "manifest.json").write_text(json.dumps(
        json.loads((teachers / "t" / "manifest.json").read_text()) | {"study": "teachers", "part": "t"}))
    shutil.rmtree(studies / "mnist_regime")
    (again / "study.json").write_text('{"sources": ["teachers"]}')
    a, t = _load_all(studies)
    assert sorted(r[0] for r in a.repeats) == [f"mnist/teacher_mlp/seed{s}" for s in range(3)]
    assert {r[1] for r in a.repeats} == {"teachers"} and t.repeats == []
    counted = a.counted()
    assert len(record_runs.finished_runs(counted)) == 15 and "teacher_mlp" not in counted["grid"]["methods"]
    runs = records.tables_of(counted)["runs.csv"]
    assert (runs.status == "ok").sum() == 15 and "teacher_mlp" not in set(runs.method)


def test_declarations_that_cannot_hold_are_refused(tmp_path):
    studies = _copy(tmp_path, "mnist_regime", "mnist_regime_pilot_e16")
    (studies / "mnist_regime" / "study.json").write_text('{"sources": ["mnist_regime_pilot_e16"]}')
    with pytest.raises(records.RecordError) as e:
        _load_all(studies)
    assert str(e.value) == ("studies mnist_regime and mnist_regime_pilot_e16 declare each other as their source "
                            "(study.json) and share run mnist/frozen_ln/seed0: the run must count in one of them; "
                            "keep one declaration")
    (studies / "mnist_regime" / "study.json").write_text('{"sources": ["mnist_regime_pilot_e12"]}')
    with pytest.raises(records.RecordError) as e:
        _load_all(studies)
    assert str(e.value) == (f"{studies / 'mnist_regime' / 'study.json'} declares the source "
                            "'mnist_regime_pilot_e12', which is no other study folder beside it")


def _edit(part: Path, name: str, fn) -> None:
    """Change one file of a part and record its new checksum (as a careless hand edit would not)."""
    (part / name).write_bytes(records._gzip(fn(gzip.decompress((part / name).read_bytes()))))
    manifest = json.loads((part / "manifest.json").read_text())
    manifest["files"][name] = hashlib.sha256((part / name).read_bytes()).hexdigest()
    (part / "manifest.json").write_text(json.dumps(manifest))


def test_a_run_in_two_parts_is_refused_saying_whether_it_differs(tmp_path):
    studies = _copy(tmp_path, "mnist_regime")
    study = studies / "mnist_regime"
    first, again = study / "2026-12-02-seed0", study / "2026-12-02-seed0-again"
    shutil.copytree(first, again)
    (again / "manifest.json").write_text(json.dumps(json.loads((again / "manifest.json").read_text())
                                                    | {"part": again.name}))
    with pytest.raises(records.RecordError) as e:
        sf.load_study(study)
    assert str(e.value) == (f"run mnist/frozen_ln/seed0 is in two parts of the study ({first} and {again}), the same "
                            "run twice (duplicate): keep one (a duplicate is never counted twice)")

    def retrained(data: bytes) -> bytes:
        v = pd.read_csv(pd.io.common.BytesIO(data))
        hit = (v.method == "frozen_ln") & (v.metric == "accuracy")
        v.loc[hit, "value"] = v.loc[hit, "value"] + 0.1
        return v.to_csv(index=False, lineterminator="\n").encode()

    _edit(again, "values.csv.gz", retrained)
    with pytest.raises(records.RecordError) as e:
        sf.load_study(study)
    assert str(e.value) == (f"run mnist/frozen_ln/seed0 is in two parts of the study ({first} and {again}) and "
                            "differs between them (mnist:accuracy 97.56 vs 97.66): it was retrained or evaluated "
                            "anew; keep the part whose run is to count and record the other again without it (a "
                            "run is never counted twice)")


def test_the_findings_header_lists_every_part_on_disk_with_its_runs():
    """docs/findings.md names every part it read and its finished runs: here compared with studies/
    on disk (test_findings regenerates the page from studies/ byte for byte)."""
    page = (ROOT / "docs" / "findings.md").read_text()
    listed = {}
    for study, parts in re.findall(r"^- \*\*(\S+)\*\* \(`studies/\S+`.*\n  - parts read \(finished runs\): (.*)\.$",
                                   page, re.M):
        listed[study] = {name: int(n) for name, n in re.findall(r"`([^`]+)` (\d+)", parts)}
    on_disk = {}
    for study in sf.study_folders(STUDIES):
        on_disk[study.name] = {}
        for part in sf.parts_of(study):
            runs = pd.read_csv(part / "runs.csv.gz")
            on_disk[study.name][part.name] = int(runs.status.isin(record_runs.FINISHED).sum())
    assert listed == on_disk
    assert sum(on_disk["mnist_regime"].values()) >= 18 and len(on_disk["mnist_regime"]) >= 8
    assert ("  - repeats (declared in `studies/mnist_regime_pilot_e16/study.json`): mnist/frozen_ln/seed0 is "
            "mnist_regime's mnist/frozen_ln/seed0 (the same in every recorded number: per-epoch losses, validation "
            "metric, test metrics; times aside); counted once, in mnist_regime: the claims and figures do not "
            "read it.") in page.splitlines()


def _baseline_pair(tmp_path: Path) -> tuple[Path, Path]:
    """mnist_regime less its part of autonorm seeds 1-2 (A), and a study "pb" of that part plus a
    copy of A's seed-0 part (four repeats of A's runs, frozen_ln among them), declaring A its source
    and the baseline it pairs frozen_ln with: as mnist_per_block pairs with mnist_regime."""
    studies = _copy(tmp_path, "mnist_regime")
    a = studies / "mnist_regime"
    pb = studies / "pb"
    for part in ("2026-12-03-autonorm-b", "2026-12-02-seed0"):
        shutil.copytree(a / part, pb / part)
        (pb / part / "manifest.json").write_text(json.dumps(json.loads((pb / part / "manifest.json").read_text())
                                                            | {"study": "pb"}))
    shutil.rmtree(a / "2026-12-03-autonorm-b")
    (pb / "study.json").write_text(json.dumps({"sources": ["mnist_regime"],
                                               "baseline": {"study": "mnist_regime", "methods": ["frozen_ln"]}}))
    return a, pb


def test_a_declared_baseline_pairs_a_study_with_its_sources_runs(tmp_path):
    """The study's own runs (autonorm seeds 1-2) and the source's frozen_ln (seeds 0-2), paired by
    seed; its repeats (seed 0 of four methods) are not read, and its repeat of frozen_ln has the
    same numbers (per epoch and at the end) as the source's: the evidence that allows the pairing."""
    a, pb = _baseline_pair(tmp_path)
    loaded = {r.name: r for r in _load_all(a.parent)}
    judged = loaded["pb"].judged(loaded)
    runs = sorted((m, int(s)) for _, m, s in record_runs.finished_runs(judged))
    assert runs == [("autonorm", 1), ("autonorm", 2), ("frozen_ln", 0), ("frozen_ln", 1), ("frozen_ln", 2)]
    assert loaded["pb"].repeat_differences["mnist/frozen_ln/seed0"] == []
    fl = judged["runs"][judged["runs"].method == "frozen_ln"]
    assert sorted(fl.seed.astype(int)) == [0, 1, 2] and set(fl.status) == {"ok"}  # one row a run
    v = judged["values"]
    acc = v[(v.method == "frozen_ln") & (v.metric == "accuracy")].sort_values("seed")["value"].tolist()
    assert acc == [97.56, 97.58, 97.52]  # the source's, as recorded


def test_a_baseline_whose_repeat_differs_or_is_missing_is_refused(tmp_path):
    a, pb = _baseline_pair(tmp_path)

    def retrained(data: bytes) -> bytes:
        h = pd.read_csv(pd.io.common.BytesIO(data))
        hit = (h.method == "frozen_ln") & (h.epoch == 3)
        h.loc[hit, "train_loss"] = h.loc[hit, "train_loss"] + 1e-6
        return h.to_csv(index=False, lineterminator="\n").encode()

    _edit(pb / "2026-12-02-seed0", "history.csv.gz", retrained)
    loaded = {r.name: r for r in _load_all(a.parent)}
    with pytest.raises(records.RecordError) as e:
        loaded["pb"].judged(loaded)
    assert str(e.value).startswith(f"{pb / 'study.json'}: it pairs with mnist_regime's frozen_ln runs, but its repeat "
                                   "mnist/frozen_ln/seed0 differs from mnist_regime's (epoch 3 train_loss ")
    assert str(e.value).endswith("the two codes do not compute frozen_ln alike; train frozen_ln in this study")
    (pb / "study.json").write_text(json.dumps({"sources": ["mnist_regime"],
                                               "baseline": {"study": "mnist_regime", "methods": ["adanorm", "teacher_mlp"]}}))
    loaded = {r.name: r for r in _load_all(a.parent)}
    with pytest.raises(records.RecordError, match="pairs with mnist_regime's teacher_mlp runs, but repeats none of them"):
        loaded["pb"].judged(loaded)
    (pb / "study.json").write_text(json.dumps({"sources": ["mnist_regime"], "baseline": {"study": "elsewhere",
                                                                                           "methods": ["frozen_ln"]}}))
    with pytest.raises(records.RecordError, match='"baseline" must be'):
        _load_all(a.parent)


def test_a_study_json_may_hold_the_plan_alone_and_refuses_a_bad_one(tmp_path):
    """studies/mnist_patch4 and studies/california_depth declare the seeds their plan fixed
    ({"planned_seeds": 5}, rule 3 of their READMEs) and no source; a plan that is no whole number of seeds,
    or a key a study.json does not hold, is refused naming the file."""
    from autonorm.analysis.study_folders import declaration_of, planned_seeds_of

    for name in ("mnist_patch4", "california_depth"):
        assert planned_seeds_of(STUDIES / name) == 5 and declaration_of(STUDIES / name)[0] == []
    assert planned_seeds_of(STUDIES / "mnist_regime") == 0  # no study.json
    assert planned_seeds_of(STUDIES / "mnist_per_block") == 0  # sources only
    folder = tmp_path / "s"
    folder.mkdir()
    for bad in ('{"planned_seeds": 0}', '{"planned_seeds": "5"}', '{"planned_seeds": true}', '{"planned_seeds": 2.5}'):
        (folder / "study.json").write_text(bad)
        with pytest.raises(records.RecordError) as e:
            planned_seeds_of(folder)
        assert str(e.value).startswith(f'{folder / "study.json"}: "planned_seeds" must be a whole number of seeds')
    (folder / "study.json").write_text('{"planned_seed": 5}')
    with pytest.raises(records.RecordError) as e:
        planned_seeds_of(folder)
    assert str(e.value) == (f"{folder / 'study.json'}: unknown key(s) planned_seed; a study.json holds sources, "
                            "baseline, planned_seeds, same_floats")
    (folder / "study.json").write_text('[5]')
    with pytest.raises(records.RecordError, match="expected a JSON object"):
        declaration_of(folder)


#: the CPU type of mnist_patch4's first runs, and the one its 2026-12-06 midday sitting trained on
CPU_A, CPU_B = "Intel(R) Xeon(R) Processor, torch AVX512", "Intel(R) Xeon(R) Processor @ 2.80GHz, torch AVX512"


def _patch4(tmp_path: Path, check: dict | None) -> Path:
    """mnist_patch4's pilot and AutoNorm-S seed 0 parts, the latter's run marked as trained on CPU_B, and a
    study.json with the plan and ``check`` (a same-floats entry; None: none)."""
    study = tmp_path / "studies" / "mnist_patch4"
    study.mkdir(parents=True)
    for part in ("2026-12-05-pilot", "2026-12-05-autonorm_s-s0"):
        shutil.copytree(STUDIES / "mnist_patch4" / part, study / part)

    def on_b(raw: bytes) -> bytes:
        prov = pd.read_csv(__import__("io").BytesIO(raw))
        assert set(prov.cpu) == {CPU_A}
        return prov.assign(cpu=CPU_B).to_csv(index=False).encode()
    _edit(study / "2026-12-05-autonorm_s-s0", "provenance.csv.gz", on_b)
    (study / "study.json").write_text(json.dumps({"planned_seeds": 5, **({"same_floats": [check]} if check else {})}))
    return study


def _pilot_check(**change) -> dict:
    """The check studies/mnist_patch4/study.json declares (the pilot's epoch 1 trained again on CPU_B)."""
    check = json.loads((STUDIES / "mnist_patch4" / "study.json").read_text())["same_floats"][0]
    assert check["run"] == "mnist/frozen_ln/seed0" and check["cpu"] == CPU_B
    return {**check, **change}


def test_runs_on_two_cpu_types_are_paired_only_where_a_same_floats_check_joins_them(tmp_path):
    """The pilot (CPU_A) and AutoNorm-S seed 0 (CPU_B here): refused without a check, read with one, and
    the page says which check joined them."""
    from autonorm.report.findings.page import _cpu_lines

    study = _patch4(tmp_path, None)
    with pytest.raises(records.RecordError) as e:
        sf.load_studies([("mnist_patch4", study)])
    assert str(e.value).startswith(f"mnist_patch4: its runs trained on CPU types '{CPU_A}' (1 runs), '{CPU_B}' "
                                   f"(1 runs), and no same_floats check in {study / 'study.json'} joins them")
    study = _patch4(tmp_path / "b", _pilot_check())
    (got,) = sf.load_studies([("mnist_patch4", study)])
    assert got.same_floats == [_pilot_check()]
    (line,) = _cpu_lines(got.record["provenance"], got.same_floats)
    assert "2 CPU types, checked for the same floats and paired across: mnist/frozen_ln/seed0 trained again on " \
           f"`{CPU_B}` gave the record's losses to every digit at epoch 1 (study.json)" in line
    # a check that joins CPU_A to a third type leaves CPU_B unjoined
    study = _patch4(tmp_path / "c", _pilot_check(cpu="AMD EPYC, torch AVX2"))
    with pytest.raises(records.RecordError, match="no same_floats check"):
        sf.load_studies([("mnist_patch4", study)])


def test_a_same_floats_check_must_equal_the_record_to_every_digit(tmp_path):
    import math

    epoch1 = _pilot_check()["epochs"][0]
    off = {**epoch1, "train_loss": math.nextafter(epoch1["train_loss"], 3.0)}  # one ulp away
    cases = {
        "differs from the record (epoch 1 train_loss 2.1358765516235936 (recorded 2.135876551623593)): the two "
        "CPUs do not train it to the same floats; remove the entry": _pilot_check(epochs=[off]),
        "epoch 17: not in the record": _pilot_check(epochs=[{**epoch1, "epoch": 17}]),
        "which the study's record does not hold": _pilot_check(run="mnist/frozen_ln/seed9"),
        "the check compares two CPU types": _pilot_check(cpu=CPU_A),
        '"same_floats" is a list of': _pilot_check(epochs=[]),
    }
    for i, (want, check) in enumerate(cases.items()):
        study = _patch4(tmp_path / str(i), check)
        with pytest.raises(records.RecordError) as e:
            sf.load_studies([("mnist_patch4", study)])
        assert str(e.value).startswith(f"{study / 'study.json'}: ") and want in str(e.value), str(e.value)


def test_same_floats_compares_a_run_trained_again_with_the_record(tmp_path, capsys):
    """The command that writes a check: the pilot's epoch 1 as the record holds it matches (exit 0, the
    entry); one digit off does not (exit 1); a folder of another config is no run trained again (exit 2)."""
    from autonorm.analysis.same_floats import main

    study = _patch4(tmp_path, _pilot_check())
    h = records.read_part(study / "2026-12-05-pilot")["history"].iloc[0]
    run = tmp_path / "again"
    run.mkdir()

    def write(train_loss: float, config_hash: str = "824eb1813920e793") -> None:
        (run / "env.json").write_text(json.dumps({"cpu": CPU_B}))
        (run / "history.json").write_text(json.dumps([{"epoch": 1, "train_loss": train_loss, "val_loss": h.val_loss,
                                                       "config_hash": config_hash}]))
    write(float(h.train_loss))
    assert main([str(study), "mnist/frozen_ln/seed0", str(run)]) == 0
    assert json.loads(capsys.readouterr().out) == _pilot_check()
    write(float(h.train_loss) + 1e-12)
    assert main([str(study), "mnist/frozen_ln/seed0", str(run)]) == 1
    assert "differs from the record: epoch 1 train_loss" in capsys.readouterr().err
    write(float(h.train_loss), config_hash="0000000000000000")
    assert main([str(study), "mnist/frozen_ln/seed0", str(run)]) == 2
    assert "not the same run trained again" in capsys.readouterr().err


def test_one_config_trained_on_two_cpu_types_is_two_trainings():
    """california_depth's pilot (an Intel Xeon) and california_ablations' (an AMD EPYC) are one config, data and
    seed, trained to other numbers by CPUs that round floats apart: two trainings, each counted in its own study.
    The same numbers would be one run read twice, and other numbers on one CPU are refused as before. The numbers
    are the final metrics and the per-epoch losses: mnist_patch4_ablations' pilot (an AMD EPYC) has the Intel
    pilot's test accuracy, 98.37, on 10,000 images, and its epoch-1 validation loss parts in the eighth digit."""
    from types import SimpleNamespace

    key = ("california_housing", "frozen_ln", 0)

    def holder(cpu: str, rmse: float, val_loss: float = 1.2669835488):
        prov = pd.DataFrame([{"dataset": key[0], "method": key[1], "seed": 0, "config_hash": "523d", "data_identity": "13c3",
                              "cpu": cpu}])
        values = pd.DataFrame([{"dataset": key[0], "source_dataset": key[0], "method": key[1], "seed": 0,
                                "metric": "rmse", "value": rmse}])
        history = pd.DataFrame([{"dataset": key[0], "method": key[1], "seed": 0, "epoch": 1, "train_loss": 1.5,
                                 "val_loss": val_loss}])
        return SimpleNamespace(record={"provenance": prov, "values": values, "history": history}), key

    intel, amd = holder("Intel(R) Xeon(R) Processor, torch AVX512", 0.4655), holder("AMD EPYC, torch AVX2", 0.4608)
    assert sf._two_trainings([intel, amd])
    assert not sf._two_trainings([intel, holder("AMD EPYC, torch AVX2", 0.4655)])          # the same numbers: one run
    assert sf._two_trainings([intel, holder("AMD EPYC, torch AVX2", 0.4655, 1.2669834892)])  # the same metric, a loss apart
    assert not sf._two_trainings([intel, holder("Intel(R) Xeon(R) Processor, torch AVX512", 0.4608)])  # one CPU
    assert not sf._two_trainings([intel, holder("Intel(R) Xeon(R) Processor, torch AVX512", 0.4655, 1.2669834892)])
    assert not sf._two_trainings([intel, holder("", 0.4608)])                                 # a CPU not named


def test_runs_at_two_thread_counts_are_refused_like_two_cpu_types(tmp_path):
    """One CPU rounds floats differently at one and two threads: mnist_patch4's pilot (1 thread) and AutoNorm-S
    seed 0 marked as trained at 2 are refused, naming the counts; no same-floats check (of CPU types) joins them."""
    study = _patch4(tmp_path, _pilot_check())

    def on_two_threads(raw: bytes) -> bytes:
        prov = pd.read_csv(__import__("io").BytesIO(raw))
        assert set(prov.torch_threads) == {1}
        return prov.assign(torch_threads=2, cpu=CPU_A).to_csv(index=False).encode()
    _edit(study / "2026-12-05-autonorm_s-s0", "provenance.csv.gz", on_two_threads)
    (study / "study.json").write_text(json.dumps({"planned_seeds": 5}))
    with pytest.raises(records.RecordError) as e:
        sf.load_studies([("mnist_patch4", study)])
    assert str(e.value).startswith("mnist_patch4: its runs trained at 1 (1 runs), 2 (1 runs) threads")


def test_the_page_names_a_study_s_thread_count_where_it_is_not_one():
    from autonorm.report.findings.page import _cpu_lines

    prov = pd.DataFrame({"cpu": ["AMD EPYC, torch AVX512"], "torch_threads": [2]})
    assert _cpu_lines(prov) == ["  - CPUs of its runs: `AMD EPYC, torch AVX512` 1, at 2 threads a run."]
    assert _cpu_lines(prov.assign(torch_threads=1)) == ["  - CPUs of its runs: `AMD EPYC, torch AVX512` 1."]
