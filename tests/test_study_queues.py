"""The study workers (studies/*/queue.sh: mnist_patch4, california_depth, fmnist_patch4 and the two ablation
studies; their shared part studies/queue_lib.sh), run against a stub `snakemake` that writes each target it is
asked for: the pilot's rule, the list's order, a run another worker holds, two workers at once, unfrozen
AutoNorm trained only for the seeds whose AutoNorm-S froze, and a new machine: the runs the study's committed
record holds are not trained again, and a damaged record stops the worker. Each worker runs from a copy of its
study folder holding the parts a test gives it (none, or some of the committed ones)."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

STUDIES = Path(__file__).resolve().parents[1] / "studies"
#: each study's worker, the eval folder of its dataset, its pilot's metric with an in-regime and an
#: out-of-regime value (README rule 1: MNIST accuracy >= 96.82, California RMSE <= 0.5396, Fashion-MNIST
#: accuracy >= 91.12)
QUEUES = {"mnist_patch4": ("results/mnist_patch4/eval/mnist", "MNIST_RAW", 98.37, 96.5),
          "california_depth": ("results/california_depth/eval/california_housing", "CAL_RAW", 0.4633, 0.5412),
          "fmnist_patch4": ("results/fmnist_patch4/eval/fashion_mnist", "FMNIST_RAW", 91.2, 91.0),
          "california_ablations": ("results/california_ablations/eval/california_housing", "CAL_RAW", 0.4608, 0.5412),
          "mnist_patch4_ablations": ("results/mnist_patch4_ablations/eval/mnist", "MNIST_RAW", 98.37, 96.5)}
#: the studies whose preset the training code's commit (6ac1786) already holds: their workers read it from
#: the worktree; the others' presets were written later and are read from the main checkout
PRESET_IN_WORKTREE = {"mnist_patch4", "california_depth"}
#: the ablation studies read no unfrozen AutoNorm (their README's rule 2): their workers train none
NO_UNFROZEN = {"california_ablations", "mnist_patch4_ablations"}

# the stub: appends its target to trained.log and writes it; an AutoNorm-S run writes its freeze record,
# froze when its seed is listed in $FREEZES
STUB = r"""#!/usr/bin/env bash
target=$1
echo "${target#$EVAL/}" >> "$STUB_LOG"
printf '%s\n' "$PWD" "$@" "--" >> "$STUB_LOG.args"
sleep "${STUB_SECONDS:-0}"
mkdir -p "$(dirname "$target")"
echo "{\"test\": {\"accuracy\": $PILOT, \"rmse\": $PILOT}}" > "$target"
case $target in */autonorm_s/seed*)
  s=$(basename "$target" .json); d=${target/\/eval\//\/runs\/}; d=${d%.json}; mkdir -p "$d"
  case " $FREEZES " in *" $s "*) f=true;; *) f=false;; esac
  echo "{\"froze\": $f}" > "$d/freeze.json";;
esac
"""


def _study_copy(tmp_path: Path, study: str, parts: tuple[str, ...] = ()) -> Path:
    """studies/ with the worker, its library and the named committed parts of ``study``, under tmp_path."""
    here = tmp_path / "studies" / study
    if not here.exists():
        here.mkdir(parents=True)
        presets = tmp_path / ("worktree" if study in PRESET_IN_WORKTREE else ".") / "workflow" / "presets"
        presets.mkdir(parents=True, exist_ok=True)
        (presets / f"{study}.yaml").write_text(f"preset: {study}\n")
        shutil.copy(STUDIES / "queue_lib.sh", here.parent)
        shutil.copy(STUDIES / study / "queue.sh", here)
        for todo in (STUDIES / study).glob("todo*.txt"):   # the lists queue.sh names
            shutil.copy(todo, here)
        for part in parts:
            shutil.copytree(STUDIES / study / part, here / part)
    return here / "queue.sh"


def _recorded_cpu(study: Path) -> str:
    from autonorm.analysis.recorded_run import recorded_study
    return str(recorded_study(study)["provenance"]["cpu"].dropna().iloc[0])


def _queue(tmp_path: Path, todo: list[str], freezes: str = "", study: str = "mnist_patch4", in_regime: bool = True,
           workers: int = 1, stub_seconds: float = 0, parts: tuple[str, ...] = (),
           lists: dict[str, list[str]] | None = None, cpu: str | None = None,
           worker_env: list[dict[str, str]] | None = None, stagger: float = 0):
    """Run the study's worker(s) on the list ``todo`` (as $TODO), or, given ``lists``, on the lists its
    queue.sh names, written under those names into the study's folder (no $TODO). ``worker_env``: each
    worker's own variables; ``stagger``: seconds between the workers' starts."""
    if shutil.which("flock") is None:
        pytest.skip("flock (util-linux) is not installed")
    eval_dir, raw_var, good, bad = QUEUES[study]
    queue = _study_copy(tmp_path, study, parts)
    work, bin_ = tmp_path / "worktree", tmp_path / "bin"
    work.mkdir(exist_ok=True)
    bin_.mkdir(exist_ok=True)
    (bin_ / "snakemake").write_text(STUB)
    (bin_ / "snakemake").chmod(0o755)
    (tmp_path / "todo.txt").write_text("\n".join(todo) + "\n")
    for name, runs in (lists or {}).items():
        (queue.parent / name).write_text("\n".join(runs) + "\n")
    log = tmp_path / "trained.log"
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}", "WORKTREE": str(work),
           raw_var: str(tmp_path / "raw with space"), "TODO": str(tmp_path / "todo.txt"), "EVAL": eval_dir,
           "STUB_LOG": str(log), "FREEZES": freezes, "PILOT": str(good if in_regime else bad),
           "STUB_SECONDS": str(stub_seconds)}
    if cpu or parts:   # the machine of the recorded runs, unless named (no other CPU type trains them)
        env["AUTONORM_CPU"] = cpu or _recorded_cpu(queue.parent)
    if lists is not None:
        del env["TODO"]
    procs = []
    for i in range(workers):
        if i and stagger:
            time.sleep(stagger)
        own = {**env, **(worker_env[i] if worker_env else {})}
        procs.append(subprocess.Popen(["bash", str(queue)], env=own, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=120) for p in procs]
    trained = log.read_text().split() if log.exists() else []
    return [(p.returncode, *o) for p, o in zip(procs, outs)], trained


@pytest.mark.parametrize("study", list(QUEUES))
def test_the_queue_trains_the_list_in_order_and_unfrozen_autonorm_only_where_the_freeze_fired(tmp_path, study):
    todo = ["autonorm_s/seed0", "frozen_ln/seed1", "autonorm_s/seed1", "random/seed0"]
    ((rc, out, err),), trained = _queue(tmp_path, todo, freezes="seed1", study=study)
    assert rc == 0, err
    unfrozen = [] if study in NO_UNFROZEN else ["autonorm/seed1.json"]
    assert trained == ["frozen_ln/seed0.json", "autonorm_s/seed0.json", "frozen_ln/seed1.json",
                       "autonorm_s/seed1.json", *unfrozen, "random/seed0.json"]
    # a second worker started later finds nothing left: no run twice
    (tmp_path / "trained.log").unlink()
    ((rc, out, err),), trained = _queue(tmp_path, todo, freezes="seed1", study=study)
    assert rc == 0 and trained == []


@pytest.mark.parametrize("study", list(QUEUES))
def test_two_workers_at_once_train_each_run_once(tmp_path, study):
    """Two workers started together (one a core): each run of the list, and the pilot, is trained once."""
    todo = [f"{m}/seed{s}" for s in range(3) for m in ("frozen_ln", "autonorm_s", "random")]
    results, trained = _queue(tmp_path, todo, freezes="seed2", study=study, workers=2, stub_seconds=0.3)
    assert [rc for rc, _, _ in results] == [0, 0], [e for _, _, e in results]
    unfrozen = set() if study in NO_UNFROZEN else {"autonorm/seed2.json"}
    want = {f"{t}.json" for t in todo} | unfrozen   # the pilot is frozen_ln/seed0
    assert sorted(trained) == sorted(want) and len(trained) == len(want)


@pytest.mark.parametrize("in_regime", [True, False])
def test_a_worker_told_not_to_wait_trains_the_list_beside_the_pilot(tmp_path, in_regime):
    """mnist_patch4_ablations' amendment to rule 1's schedule: a second worker started with PILOT_WAIT=0
    while the first trains the pilot takes the list meanwhile, each run once; the pilot's rule is still read
    by the first worker, which stops (exit 3) when it is out of the regime (the list's runs are then set aside
    by hand, unrecorded). Without PILOT_WAIT=0 the second worker would wait for the pilot."""
    todo = ["teacher_mlp/seed0", "autonorm_s/seed0", "distill/seed0"]
    results, trained = _queue(tmp_path, todo, study="mnist_patch4_ablations", in_regime=in_regime, workers=2,
                              stub_seconds=3.0, stagger=0.4, worker_env=[{}, {"PILOT_WAIT": "0"}])
    (rc1, out1, err1), (rc2, out2, err2) = results
    assert rc2 == 0, err2
    assert "another worker holds the pilot" in out2 and "pilot test" not in out2
    assert trained[0] == "frozen_ln/seed0.json" and sorted(trained) == sorted(
        ["frozen_ln/seed0.json", *(f"{t}.json" for t in todo)])
    # the pilot's stub sleeps 3 s (a margin for the workers' start-up on a busy machine): had the second worker
    # waited, the first would have taken a run of the list
    assert trained[1] == "teacher_mlp/seed0.json" and "teacher_mlp/seed0" in out2
    assert rc1 == (0 if in_regime else 3)
    assert ("out of regime" in out1) is (not in_regime)


@pytest.mark.parametrize("study", list(QUEUES))
def test_each_run_is_asked_of_snakemake_in_the_worktree_with_the_study_preset_and_raw_folder(tmp_path, study):
    """Snakemake runs in the worktree, on one core, with the study's preset (from the main checkout, or from
    the worktree where the training code's commit holds it) and the raw folder of the study's dataset, whose
    path has a space in it."""
    ((rc, out, err),), trained = _queue(tmp_path, ["autonorm_s/seed0"], study=study)
    assert rc == 0, err
    calls = [c.strip("\n").split("\n") for c in (tmp_path / "trained.log.args").read_text().split("--\n") if c]
    assert len(calls) == 2                                             # the pilot and the list's one run
    dataset = QUEUES[study][0].rsplit("/", 1)[1]
    preset = (f"workflow/presets/{study}.yaml" if study in PRESET_IN_WORKTREE
              else str(tmp_path / "workflow" / "presets" / f"{study}.yaml"))
    for cwd, target, *args in calls:
        assert cwd == str(tmp_path / "worktree") and target.startswith(QUEUES[study][0] + "/")
        assert args[args.index("--configfile") + 1] == preset and args[args.index("--cores") + 1] == "1"
        assert args[args.index("--config") + 1] == f'raw_from={{"{dataset}": "{tmp_path / "raw with space"}"}}'


@pytest.mark.parametrize("missing", ["raw folder", "preset"])
def test_a_worker_without_its_raw_folder_or_preset_stops_before_it_trains(tmp_path, missing):
    queue = _study_copy(tmp_path, "california_ablations")
    if missing == "preset":
        (tmp_path / "workflow" / "presets" / "california_ablations.yaml").unlink()
    (tmp_path / "worktree").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CAL_RAW"}
    env["WORKTREE"] = str(tmp_path / "worktree")
    if missing == "preset":
        env["CAL_RAW"] = str(tmp_path)
    p = subprocess.run(["bash", str(queue)], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert ("set CAL_RAW to the folder" in p.stderr) if missing == "raw folder" else \
        ("no preset" in p.stderr and "california_ablations.yaml" in p.stderr)
    assert not (tmp_path / "worktree" / "results").exists()   # nothing started


def test_a_run_another_worker_holds_is_left_to_it(tmp_path):
    todo = ["autonorm_s/seed0", "frozen_ln/seed1"]
    claims = tmp_path / "worktree" / "results" / "mnist_patch4" / ".claims"
    claims.mkdir(parents=True)
    with open(claims / "autonorm_s_seed0.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "another worker is training it"
        ((rc, out, err),), trained = _queue(tmp_path, todo, freezes="seed0")
    assert rc == 0, err
    # neither the held run nor its unfrozen twin (its freeze is not decided yet) is taken here
    assert trained == ["frozen_ln/seed0.json", "frozen_ln/seed1.json"]


@pytest.mark.parametrize("study", list(QUEUES))
def test_a_pilot_out_of_the_regime_stops_the_queue(tmp_path, study):
    ((rc, out, err),), trained = _queue(tmp_path, ["autonorm_s/seed0"], study=study, in_regime=False)
    assert rc == 3 and "out of regime" in out
    assert trained == ["frozen_ln/seed0.json"]


def test_the_california_list_is_rule_3_seed_by_seed_then_the_other_baselines():
    todo = (STUDIES / "california_depth" / "todo.txt").read_text().split()
    rule3 = [f"{m}/seed{s}" for s in range(5) for m in ("frozen_ln", "autonorm_s", "random", "teacher_mlp")]
    assert todo[:20] == rule3 and len(todo) == len(set(todo)) == 35
    assert {t.split("/")[0] for t in todo[20:]} == {"adanorm", "film", "dyt"}


def test_the_california_ablations_tables_list_is_section_1_seed_by_seed():
    """README rule 5: frozen_ln beyond the pilot, then adanorm, film, dyt, seed by seed; no run of the
    ablations' list again, and the preset trains every method the list names."""
    tables = (STUDIES / "california_ablations" / "todo_tables.txt").read_text().split()
    want = [f"{m}/seed{s}" for s in range(5) for m in ("frozen_ln", "adanorm", "film", "dyt") if (m, s) != ("frozen_ln", 0)]
    assert tables == want
    ablations = (STUDIES / "california_ablations" / "todo.txt").read_text().split()
    assert not set(tables) & set(ablations)
    import yaml
    preset = yaml.safe_load((STUDIES.parent / "workflow" / "presets" / "california_ablations.yaml").read_text())
    assert {t.split("/")[0] for t in tables + ablations} - set(preset["ablations"]["variants"]) <= set(preset["methods"])


def test_a_worker_trains_its_study_lists_one_after_another(tmp_path):
    """california_ablations' queue.sh names two lists: the ablations', then the tables' (README rule 5)."""
    lists = {"todo.txt": ["autonorm_s/seed0", "tau_1/seed0"], "todo_tables.txt": ["adanorm/seed0", "frozen_ln/seed1"]}
    ((rc, out, err),), trained = _queue(tmp_path, [], study="california_ablations", lists=lists)
    assert rc == 0, err
    assert trained == ["frozen_ln/seed0.json", "autonorm_s/seed0.json", "tau_1/seed0.json",
                       "adanorm/seed0.json", "frozen_ln/seed1.json"]
    assert out.count("nothing left in") == 2


def test_a_worker_whose_list_is_missing_stops_before_it_trains(tmp_path):
    (_study_copy(tmp_path, "california_ablations").parent / "todo_tables.txt").unlink()   # queue.sh names it
    ((rc, out, err),), trained = _queue(tmp_path, [], study="california_ablations", lists={})
    assert rc == 2 and "no list" in err and "todo_tables.txt" in err
    assert trained == []


def test_a_new_machine_skips_the_runs_the_record_holds_and_reads_the_pilot_from_it(tmp_path):
    """An empty results folder and a record of the pilot (98.37) and AutoNorm-S seed 0: neither is trained
    again, rule 1 reads the recorded pilot, and the next run of the list is trained."""
    todo = ["autonorm_s/seed0", "frozen_ln/seed1"]
    ((rc, out, err),), trained = _queue(tmp_path, todo, freezes="seed0", in_regime=False,
                                        parts=("2026-12-05-pilot", "2026-12-05-autonorm_s-s0"))
    assert rc == 0, err
    assert "the pilot is in the study's record" in out and "pilot test accuracy 98.37" in out
    # the stub's pilot would be out of the regime (96.5) and autonorm_s seed 0 would freeze: neither ran
    assert trained == ["frozen_ln/seed1.json"]


def test_a_recorded_autonorm_s_that_froze_has_its_recorded_unfrozen_twin_skipped_too(tmp_path):
    """California seed 1: AutoNorm-S froze, and its unfrozen AutoNorm run is recorded beside it."""
    todo = ["autonorm_s/seed1", "random/seed1"]
    ((rc, out, err),), trained = _queue(tmp_path, todo, study="california_depth", in_regime=False,
                                        parts=("2026-12-05-pilot", "2026-12-05-seed1-a"))
    assert rc == 0, err
    assert trained == ["random/seed1.json"]


def test_a_damaged_record_stops_the_worker_before_it_trains(tmp_path):
    queue = _study_copy(tmp_path, "mnist_patch4", ("2026-12-05-pilot",))
    (queue.parent / "2026-12-05-pilot" / "manifest.json").write_text("{ not json")
    ((rc, out, err),), trained = _queue(tmp_path, ["frozen_ln/seed1"])
    assert rc == 1 and "2026-12-05-pilot" in err and "manifest.json" in err
    assert trained == []


def test_recorded_run_answers_from_the_parts_it_finds(tmp_path, capsys):
    from autonorm.analysis.recorded_run import main
    here = _study_copy(tmp_path, "california_depth", ("2026-12-05-pilot", "2026-12-05-seed0", "2026-12-05-seed1-a")).parent
    assert main([str(here), "california_housing/frozen_ln/seed0", "--metric", "rmse"]) == 0
    assert abs(float(capsys.readouterr().out) - 0.4655) < 5e-5            # the pilot, as its README states it
    assert main([str(here), "california_housing/autonorm_s/seed1", "--froze"]) == 0   # it froze
    assert main([str(here), "california_housing/autonorm_s/seed0", "--froze"]) == 3   # it did not
    assert main([str(here), "california_housing/frozen_ln/seed2"]) == 3   # recorded in a part not copied here
    assert main([str(here), "california_housing/frozen_ln/seed0", "--metric", "accuracy"]) == 2
    assert "has no test 'accuracy'" in capsys.readouterr().err
    assert main([str(here), "frozen_ln/seed0"]) == 2 and "dataset/method/seedK" in capsys.readouterr().err


def test_a_worker_on_another_cpu_type_than_the_study_trains_nothing(tmp_path):
    """california_depth's runs trained on two Intel CPU types that its same-floats check joins (study.json); a
    machine of a third type would train runs the page pairs with none of them: the worker stops (exit 4)."""
    ((rc, out, err),), trained = _queue(tmp_path, ["autonorm_s/seed0"], study="california_depth",
                                        parts=("2026-12-05-pilot",), cpu="AMD EPYC, torch AVX512")
    assert rc == 4 and trained == []
    assert "'AMD EPYC, torch AVX512' is not the study's" in err and "Intel(R) Xeon(R) Processor, torch AVX512" in err
    assert not (tmp_path / "worktree" / "results").exists()


def test_this_cpu_may_train_a_study_of_its_type_one_its_check_joins_or_one_with_no_run_yet(tmp_path):
    from autonorm.analysis.recorded_run import cpu_check
    here = _study_copy(tmp_path, "california_depth", ("2026-12-05-pilot",)).parent
    intel, other_intel = "Intel(R) Xeon(R) Processor, torch AVX512", "Intel(R) Xeon(R) Processor @ 2.80GHz, torch AVX512"
    assert cpu_check(here, intel) == (0, "")
    status, why = cpu_check(here, other_intel)
    assert status == 3 and repr(other_intel) in why            # not joined: this copy has no study.json
    shutil.copy(STUDIES / "california_depth" / "study.json", here)   # its same-floats check joins the second type
    assert cpu_check(here, other_intel) == (0, "")
    assert cpu_check(here, "AMD EPYC, torch AVX2")[0] == 3
    status, why = cpu_check(here, intel, threads=2)             # its runs trained at one thread
    assert status == 3 and "its runs trained at 1 threads, a worker's at 2" in why
    empty = tmp_path / "studies" / "new_study"
    empty.mkdir()
    assert cpu_check(empty, "AMD EPYC, torch AVX2") == (0, "")   # no run yet: this CPU becomes the study's


def _partly_trained(runs: Path, run: str, cpu: str, threads: int = 1) -> Path:
    """A run folder as an attempt leaves it when it stops before its last epoch: env.json and a checkpoint."""
    folder = runs / run
    folder.mkdir(parents=True)
    (folder / "env.json").write_text(json.dumps({"cpu": cpu, "torch_threads": threads, "resumed_from_epoch": None}))
    (folder / "checkpoint.pt").write_bytes(b"epoch 5")
    return folder


def test_a_run_partly_trained_on_another_cpu_type_is_not_resumed_here(tmp_path):
    """A results folder that outlived its sitting holds a run trained to epoch 5 on an AVX-512 machine; this
    machine is AVX2. Resumed, its env.json would name this CPU alone, hiding the epochs of the other: the worker
    stops (exit 4) before it trains, naming the run, though the study has no record yet."""
    runs = tmp_path / "worktree" / "results" / "california_ablations" / "runs" / "california_housing"
    partly = _partly_trained(runs, "gumbel_hard/seed2", "AMD EPYC, torch AVX512")
    ((rc, out, err),), trained = _queue(tmp_path, ["gumbel_hard/seed2"], study="california_ablations",
                                        cpu="AMD EPYC, torch AVX2")
    assert rc == 4 and trained == []
    assert "'AMD EPYC, torch AVX2' is not the study's ('AMD EPYC, torch AVX512')" in err
    assert str(partly.parents[2]) in err and "move a run folder of another machine aside" in err


def test_the_runs_in_this_results_folder_count_as_the_study_s(tmp_path):
    from autonorm.analysis.recorded_run import cpu_check, main
    here = _study_copy(tmp_path, "california_depth", ("2026-12-05-pilot",)).parent
    intel = "Intel(R) Xeon(R) Processor, torch AVX512"
    runs = tmp_path / "runs"
    assert cpu_check(here, intel, runs_dir=runs) == (0, "")        # no results folder yet
    _partly_trained(runs, "california_housing/dyt/seed0", intel)
    assert cpu_check(here, intel, runs_dir=runs) == (0, "")        # a run of the study's own type resumes
    other = _partly_trained(runs, "california_housing/film/seed0", "AMD EPYC, torch AVX2")
    status, why = cpu_check(here, intel, runs_dir=runs)
    assert status == 3 and str(other) in why and "another CPU type than the study's" in why
    shutil.rmtree(other)
    two = _partly_trained(runs, "california_housing/film/seed1", intel, threads=2)
    status, why = cpu_check(here, intel, runs_dir=runs)
    assert status == 3 and "its runs trained at 2 threads, a worker's at 1" in why
    shutil.rmtree(two)
    empty = tmp_path / "studies" / "new_study"                      # no record: the local runs decide alone
    empty.mkdir()
    assert cpu_check(empty, "AMD EPYC, torch AVX2", runs_dir=runs)[0] == 3
    assert cpu_check(empty, intel, runs_dir=runs) == (0, "")
    amd = _partly_trained(runs, "california_housing/film/seed2", "AMD EPYC, torch AVX2")   # a mixed folder
    for machine in (intel, "AMD EPYC, torch AVX2"):
        status, why = cpu_check(empty, machine, runs_dir=runs)
        assert status == 3 and "another CPU type than the study's" in why
    shutil.rmtree(amd)
    (runs / "california_housing" / "dyt" / "seed0" / "env.json").write_text("{not json")
    assert main([str(empty), "--this-cpu", "--runs", str(runs)]) == 2   # a damaged env.json stops the worker


def test_a_worker_whose_python_cannot_answer_stops_instead_of_training_recorded_runs(tmp_path):
    """A `python` without this package (exit 1, as any uncaught error) is no "not recorded" (exit 3)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python").write_text("#!/usr/bin/env bash\necho 'No module named autonorm' >&2; exit 1\n")
    (bin_ / "python").chmod(0o755)
    ((rc, out, err),), trained = _queue(tmp_path, ["frozen_ln/seed1"], parts=("2026-12-05-pilot",))
    assert rc == 1 and "No module named autonorm" in err
    assert trained == []


def test_the_mnist_ablations_list_trains_every_teacher_before_any_distillation():
    """A distill run trains its seed's Teacher MLP if it is missing: were a worker to reach a distill run while
    the other still trains that Teacher, two writers would meet in one run folder. So the five Teachers
    (minutes each) come first, then AutoNorm-S and distill seed by seed (each pair together), then the taus."""
    todo = (STUDIES / "mnist_patch4_ablations" / "todo.txt").read_text().split()
    assert todo[:5] == [f"teacher_mlp/seed{s}" for s in range(5)]
    assert todo[5:15] == [f"{m}/seed{s}" for s in range(5) for m in ("autonorm_s", "distill")]
    assert todo[15:] == [f"{m}/seed{s}" for s in range(5) for m in ("tau_0_1", "tau_2")]
