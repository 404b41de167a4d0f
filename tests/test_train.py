"""The trainer: freezing, resume, divergence, determinism, outputs (tiny models, CPU)."""

import json
import math

import pytest
import torch

from autonorm.run.train import should_freeze
from autonorm.run.optim import lr_at
from autonorm.run.train import TrainingDiverged, train_run
from helpers.tiny_datasets import make_processed, rewrite_split
from helpers.tiny_runs import run_config


@pytest.fixture(scope="module")
def image_data(tmp_path_factory):
    return make_processed(tmp_path_factory.mktemp("data"), "image_classification")


def _selector_state(path):
    sd = torch.load(path, weights_only=True)
    sd = sd.get("model", sd)
    sel = {k: v for k, v in sd.items() if ".selector." in k}
    rest = {k: v for k, v in sd.items() if ".selector." not in k}
    return sel, rest


def test_lr_schedule_by_hand():
    assert lr_at(0, 100, 10, 1.0) == pytest.approx(0.1)
    assert lr_at(9, 100, 10, 1.0) == pytest.approx(1.0)
    assert lr_at(10, 100, 10, 1.0) == pytest.approx(1.0)
    assert lr_at(55, 100, 10, 1.0) == pytest.approx(0.5)  # halfway through the cosine
    assert lr_at(100, 100, 10, 1.0, min_lr=0.1) == pytest.approx(0.1)


def test_should_freeze_rule_by_hand():
    # the rule fires only at the end of epoch t_freeze, and only when H has not collapsed below eps_h
    assert should_freeze(0.30, epoch=10, t_freeze=10, eps_h=0.1) is True
    assert should_freeze(0.10, epoch=10, t_freeze=10, eps_h=0.1) is True  # H == eps_h: not below, freeze
    assert should_freeze(0.05, epoch=10, t_freeze=10, eps_h=0.1) is False  # collapsed: keep learning
    assert should_freeze(0.30, epoch=9, t_freeze=10, eps_h=0.1) is False
    assert should_freeze(0.30, epoch=11, t_freeze=10, eps_h=0.1) is False
    assert should_freeze(math.log(2), epoch=1, t_freeze=1, eps_h=math.log(2)) is True


def test_evaluate_does_not_import_the_trainer():
    import subprocess
    import sys
    code = "import sys, autonorm.run.evaluate; sys.exit(1 if 'autonorm.run.train' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_freeze_when_entropy_high(image_data, tmp_path):
    # eps_h = 0: every entropy is >= 0, so the selectors must freeze at epoch 1
    cfg = run_config(image_data, tmp_path / "run", epochs=3, t_freeze=1, eps_h=0.0)
    assert train_run(cfg, stop_after_epochs=1) is None
    sel1, rest1 = _selector_state(tmp_path / "run" / "checkpoint.pt")
    train_run(cfg)
    sel3, rest3 = _selector_state(tmp_path / "run" / "model.pt")
    assert all(torch.equal(sel1[k], sel3[k]) for k in sel1)  # bit-identical after 2 more epochs
    assert any(not torch.equal(rest1[k], rest3[k]) for k in rest1)  # backbone kept training
    freeze = json.loads((tmp_path / "run" / "freeze.json").read_text())
    assert freeze["froze"] is True and freeze["epoch"] == 1
    assert 0.0 <= freeze["entropy_at_decision"] <= math.log(2) + 1e-6
    hist = json.loads((tmp_path / "run" / "history.json").read_text())
    assert [h["frozen"] for h in hist] == [True, True, True]
    assert set(hist[0]["gates"]["entropy"]) == {"block0.attn", "block0.mlp", "block1.attn", "block1.mlp"}


def test_no_freeze_when_entropy_low(image_data, tmp_path):
    # eps_h = 1 > ln 2 >= H: the entropy is always below, so nothing freezes
    cfg = run_config(image_data, tmp_path / "run", epochs=2, t_freeze=1, eps_h=1.0)
    train_run(cfg, stop_after_epochs=1)
    sel1, _ = _selector_state(tmp_path / "run" / "checkpoint.pt")
    train_run(cfg)
    sel2, _ = _selector_state(tmp_path / "run" / "model.pt")
    assert any(not torch.equal(sel1[k], sel2[k]) for k in sel1)
    freeze = json.loads((tmp_path / "run" / "freeze.json").read_text())
    assert freeze["froze"] is False and freeze["epoch"] is None
    assert freeze["entropy_at_decision"] is not None


def test_unfrozen_autonorm_never_freezes(image_data, tmp_path):
    cfg = run_config(image_data, tmp_path / "run", method="autonorm", epochs=2, t_freeze=1, eps_h=0.0)
    train_run(cfg)
    freeze = json.loads((tmp_path / "run" / "freeze.json").read_text())
    assert freeze["enabled"] is False and freeze["froze"] is False


@pytest.mark.parametrize("task", ["image_classification", "token_classification"])
def test_resume_matches_uninterrupted(tmp_path, task):
    data = make_processed(tmp_path / "data", task)
    full = run_config(data, tmp_path / "full", epochs=3, t_freeze=2, eps_h=0.0)
    m_full = train_run(full)
    part = run_config(data, tmp_path / "part", epochs=3, t_freeze=2, eps_h=0.0)
    assert train_run(part, stop_after_epochs=1) is None
    assert not (tmp_path / "part" / "metrics.json").exists()
    m_resumed = train_run(part)  # "rerun the same command after a kill"
    assert m_resumed["test"] == m_full["test"]
    h_full = json.loads((tmp_path / "full" / "history.json").read_text())
    h_part = json.loads((tmp_path / "part" / "history.json").read_text())
    strip = lambda hs: [{k: v for k, v in h.items() if k != "epoch_time_s"} for h in hs]  # noqa: E731
    assert strip(h_full) == strip(h_part)


def test_a_resumed_run_keeps_its_earlier_attempts_machines(image_data, tmp_path, monkeypatch):
    """env.json describes the last attempt; a run resumed on another machine keeps the earlier attempts' CPU
    and thread count beside it (their epochs' floats were rounded there), and the record refuses the mix."""
    import autonorm.run.train as train
    from autonorm.analysis.records import mixed_attempts
    real = train.env_info
    cpus = iter(["CPU One, torch AVX2", "CPU Two, torch AVX512"])
    monkeypatch.setattr(train, "env_info", lambda device=None: real(device) | {"cpu": next(cpus)})
    cfg = run_config(image_data, tmp_path / "run", epochs=2)
    assert train_run(cfg, stop_after_epochs=1) is None
    first = json.loads((tmp_path / "run" / "env.json").read_text())
    assert first["earlier_attempts"] == [] and first["resumed_from_epoch"] is None
    train_run(cfg)
    env = json.loads((tmp_path / "run" / "env.json").read_text())
    assert env["cpu"] == "CPU Two, torch AVX512" and env["resumed_from_epoch"] == 1
    assert [(a["cpu"], a["resumed_from_epoch"]) for a in env["earlier_attempts"]] == [("CPU One, torch AVX2", None)]
    assert env["earlier_attempts"][0]["torch_threads"] == env["torch_threads"]
    assert mixed_attempts(env) == [f"'CPU One, torch AVX2' at {env['torch_threads']} threads",
                                   f"'CPU Two, torch AVX512' at {env['torch_threads']} threads"]
    assert mixed_attempts(first) == []


def test_same_seed_same_metrics_other_seed_differs(image_data, tmp_path):
    a = train_run(run_config(image_data, tmp_path / "a", method="random", epochs=1))
    b = train_run(run_config(image_data, tmp_path / "b", method="random", epochs=1))
    train_run(run_config(image_data, tmp_path / "c", method="random", epochs=1, ) | {"seed": 1})
    assert a["test"] == b["test"]
    ha = json.loads((tmp_path / "a" / "history.json").read_text())
    hc = json.loads((tmp_path / "c" / "history.json").read_text())
    assert ha[0]["train_loss"] != hc[0]["train_loss"]


def test_outputs_and_costs(tmp_path):
    data = make_processed(tmp_path / "data", "regression")
    m = train_run(run_config(data, tmp_path / "run", method="frozen_ln", epochs=2))
    run = tmp_path / "run"
    for f in ["config.json", "env.json", "history.json", "freeze.json", "metrics.json", "model.pt",
              "checkpoint.pt"]:
        assert (run / f).exists(), f
    assert set(m["test"]) == {"rmse", "mae"} and m["status"] == "ok"
    c = m["cost"]
    assert c["params"] > 0 and c["flops_per_sample"] > 0 and c["latency_ms_per_batch"] > 0
    env = json.loads((run / "env.json").read_text())
    assert env["packages"]["torch"] and env["device"] == "cpu"
    # checkpoints are safe to load
    torch.load(run / "checkpoint.pt", weights_only=True)


def test_nan_loss_stops_with_clear_error(tmp_path):
    data = make_processed(tmp_path / "data", "regression")
    x = torch.load(data / "train.pt", weights_only=True)
    x["x"][0, 0] = float("nan")
    rewrite_split(data, "train", x)
    with pytest.raises(TrainingDiverged, match=r"epoch 1, step \d+"):
        train_run(run_config(data, tmp_path / "run", method="frozen_ln", epochs=2))
    assert not (tmp_path / "run" / "metrics.json").exists()
    failed = json.loads((tmp_path / "run" / "failed.json").read_text())
    assert failed["status"] == "diverged" and failed["epoch"] == 1


# --------------------------------------------------------------------------- bf16 autocast on the CPU
def test_native_bf16_is_read_from_the_cpu_flags(tmp_path):
    from autonorm.run.device import cpu_has_native_bf16

    with_bf16, without = tmp_path / "with", tmp_path / "without"
    with_bf16.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n")
    without.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512bw\n")  # avx512f alone is not bf16
    assert cpu_has_native_bf16(str(with_bf16)) is True
    assert cpu_has_native_bf16(str(without)) is False
    assert cpu_has_native_bf16(str(tmp_path / "not_linux")) is False


def test_bf16_on_a_cpu_without_native_bf16_is_refused_before_any_output(image_data, tmp_path, monkeypatch):
    # before: runtime.bf16 true on a CPU trained in fp32 while config.json said bf16
    from autonorm.config.run_config import ConfigError
    from autonorm.run import device

    monkeypatch.setattr(device, "cpu_has_native_bf16", lambda *a: False)
    cfg = run_config(image_data, tmp_path / "run", epochs=1)
    cfg["runtime"]["bf16"] = True
    with pytest.raises(ConfigError, match=r"runtime\.bf16 .*no native bf16"):
        train_run(cfg)
    assert not (tmp_path / "run" / "config.json").exists() and not (tmp_path / "run" / "model.pt").exists()


def test_bf16_on_a_cpu_with_native_bf16_trains_under_autocast(image_data, tmp_path, monkeypatch):
    """Where the CPU has native bf16 the setting is honoured: the same run in bf16 is not the fp32
    run (autocast is on) and lands near it (rounding, not a different result: float tolerance)."""
    from autonorm.run import device

    monkeypatch.setattr(device, "cpu_has_native_bf16", lambda *a: True)
    fp32 = run_config(image_data, tmp_path / "fp32", method="frozen_ln", epochs=2)
    bf16 = run_config(image_data, tmp_path / "bf16", method="frozen_ln", epochs=2)
    bf16["runtime"]["bf16"] = True
    m32, m16 = train_run(fp32), train_run(bf16)
    h32 = json.loads((tmp_path / "fp32" / "history.json").read_text())
    h16 = json.loads((tmp_path / "bf16" / "history.json").read_text())
    losses32, losses16 = [h["train_loss"] for h in h32], [h["train_loss"] for h in h16]
    assert losses16 != losses32  # autocast changed the rounding, so it ran
    assert losses16 == pytest.approx(losses32, rel=0.05)
    assert json.loads((tmp_path / "bf16" / "config.json").read_text())["runtime"]["bf16"] is True
    assert m16["test"]["accuracy"] == pytest.approx(m32["test"]["accuracy"], abs=15)


@pytest.mark.parametrize("task,placement", [("image_classification", "per_sublayer"), ("regression", "per_block")])
def test_autonorm_s_whose_rule_did_not_fire_is_unfrozen_autonorm_bit_for_bit(tmp_path, task, placement):
    """The freeze decision draws no random numbers and changes nothing when it does not fire, so an
    AutoNorm-S run that did not freeze is the unfrozen AutoNorm run of its seed, weight for weight and
    epoch for epoch. The analysis reads such a run as its seed's unfrozen AutoNorm where that was not
    trained (``alias_unfired_freeze``; the California depth study, one selector per block, relies on it)."""
    data = make_processed(tmp_path / "data", task)
    weights, tests, hist = {}, {}, {}
    for m in ("autonorm", "autonorm_s"):
        cfg = run_config(data, tmp_path / m, method=m, epochs=3, t_freeze=2, eps_h=1.0)  # H < 1: no freeze
        cfg["norm_options"]["placement"] = placement
        tests[m] = train_run(cfg)["test"]
        weights[m] = torch.load(tmp_path / m / "model.pt", weights_only=True)
        hist[m] = [{k: v for k, v in h.items() if k not in ("epoch_time_s", "config_hash")}  # names differ
                   for h in json.loads((tmp_path / m / "history.json").read_text())]
    freeze = json.loads((tmp_path / "autonorm_s" / "freeze.json").read_text())
    assert freeze["froze"] is False and freeze["entropy_at_decision"] is not None  # decided, and did not fire
    assert tests["autonorm"] == tests["autonorm_s"] and hist["autonorm"] == hist["autonorm_s"]
    a, b = (w.get("model", w) for w in (weights["autonorm"], weights["autonorm_s"]))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # and the rule did act on this model where it fires: a run that froze is another training
    cfg = run_config(data, tmp_path / "froze", method="autonorm_s", epochs=3, t_freeze=1, eps_h=0.0)
    cfg["norm_options"]["placement"] = placement
    train_run(cfg)
    froze = torch.load(tmp_path / "froze" / "model.pt", weights_only=True)
    c = froze.get("model", froze)
    assert not all(torch.equal(a[k], c[k]) for k in a)


# --------------------------------------------------------------------------- checkpoints across devices
def test_rng_state_of_another_device_type_seeds_the_data_generator_instead(caplog):
    """A checkpoint's data-order generator state belongs to its device type (a CUDA generator's is a
    seed and an offset, 16 bytes; a CPU one's a Mersenne Twister). Resumed on the other type it
    cannot continue, so set_rng_state seeds the generator from it, the same state the same seed, and
    says so; the torch and Python states are restored exactly either way. (The real GPU -> CPU -> GPU
    resume: tests/test_gpu.py.)"""
    import random

    from autonorm.run.checkpoint import rng_state, set_rng_state

    gen, rng = torch.Generator().manual_seed(3), random.Random(3)
    saved = rng_state(gen, rng)
    assert saved["data_device"] == "cpu"
    expected_torch, expected_py = torch.rand(3), rng.random()
    cuda_like = dict(saved, data=torch.arange(16, dtype=torch.uint8), data_device="cuda")
    draws = []
    for _ in range(2):
        g, r = torch.Generator().manual_seed(99), random.Random(99)
        set_rng_state(cuda_like, g, r)
        draws.append(torch.randperm(1000, generator=g))
        assert torch.equal(torch.rand(3), expected_torch) and r.random() == expected_py
    assert torch.equal(draws[0], draws[1])  # the same state, the same stream
    assert not torch.equal(draws[0], torch.randperm(1000, generator=torch.Generator().manual_seed(99)))
    other = dict(cuda_like, data=torch.arange(1, 17, dtype=torch.uint8))
    g = torch.Generator()
    set_rng_state(other, g, random.Random())
    assert not torch.equal(torch.randperm(1000, generator=g), draws[0])  # another state, another stream
    assert sum("data-order generator" in rec.getMessage() for rec in caplog.records) == 3


def test_rng_state_of_the_same_device_type_continues_the_stream_exactly():
    """On the same device type nothing changes: the stream continues as if never interrupted, also for
    a checkpoint written before states recorded their device (no "data_device")."""
    import random

    from autonorm.run.checkpoint import rng_state, set_rng_state

    gen = torch.Generator().manual_seed(5)
    torch.randperm(10, generator=gen)
    saved = rng_state(gen, random.Random(5))
    uninterrupted = torch.randperm(1000, generator=gen)
    for state in (saved, {k: v for k, v in saved.items() if k != "data_device"}):
        g = torch.Generator().manual_seed(0)
        set_rng_state(state, g, random.Random())
        assert torch.equal(torch.randperm(1000, generator=g), uninterrupted)
