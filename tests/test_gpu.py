"""The CUDA path (marked ``gpu``): skipped where torch has no CUDA, run on a GPU box by
``bash benchmarks/gpu_check.sh OUTDIR`` (its first stage) or ``python -m pytest -m gpu tests/test_gpu.py``.

Tiny models and the tiny fixture datasets: each test takes seconds on a GPU (the compile test the
longest, for the compilation). They use the trainer's own step (``forward_loss``, ``backward_step``),
``train_run``, the checkpoint module and ``evaluate_run``, not copies of them.
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autonorm.data import load_processed
from autonorm.layers.norms import freeze_selectors
from autonorm.models import build_model
from autonorm.run import device
from autonorm.run import train as train_mod
from autonorm.run.evaluate import evaluate_run
from autonorm.run.optim import make_optimizer
from autonorm.run.tasks import Task
from autonorm.run.train import backward_step, forward_loss, train_run
from helpers.tiny_datasets import make_processed
from helpers.tiny_runs import TINY_MODEL, run_config

ROOT = Path(__file__).resolve().parents[1]
SKIP_REASON = ("no CUDA GPU here (torch.cuda.is_available() is False): the GPU path is checked on a GPU box "
               "with `bash benchmarks/gpu_check.sh OUTDIR`")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason=SKIP_REASON)]

#: bf16 keeps 8 bits of mantissa (relative rounding 2^-9 per operation): a tiny model's loss under
#: autocast lands within 2% of its fp32 loss; a wrong cast (fp16 overflow, a norm in bf16 that
#: should not be) moves it by far more
BF16_LOSS_RTOL = 0.02
#: torch.compile fuses and reorders float32 arithmetic: float tolerance, not bits
COMPILE_LOSS_RTOL, COMPILE_GRAD_RTOL, COMPILE_GRAD_ATOL = 1e-4, 1e-3, 1e-5


@pytest.fixture(autouse=True)
def gpu_slots(tmp_path, monkeypatch):
    """This test's GPU slot locks, in its own folder, released at the end (a run's resolve_device
    claims one slot per process and keeps it: reset here so the tests do not share a claim)."""
    locks = []
    monkeypatch.setattr(device, "_held_locks", locks)
    monkeypatch.setattr(device, "_claimed", None)
    monkeypatch.setenv(device.LOCK_DIR_ENV, str(tmp_path / "gpu-locks"))
    monkeypatch.delenv(device.RUNS_PER_GPU_ENV, raising=False)
    yield tmp_path / "gpu-locks"
    for f in locks:
        f.close()


@pytest.fixture(scope="module")
def image_data(tmp_path_factory):
    return make_processed(tmp_path_factory.mktemp("data"), "image_classification")


def _one_batch(data_dir, dev, n=16, seed=0):
    """A training batch as the trainer makes it (inputs normalised, crop/flip, MixUp/CutMix) on ``dev``."""
    data = load_processed(data_dir)
    tcfg = run_config(data_dir, "unused")["train"]
    task = Task(data.meta, tcfg, dev)
    x, y = data.split("train", device=dev)
    gen = torch.Generator(device=dev).manual_seed(seed)
    xb, yb = task.augment(task.inputs(x[:n]), y[:n], gen, random.Random(seed))
    return data.meta, tcfg, task, xb, yb


def _tiny_model(meta, method, dev, seed=0, **model):
    torch.manual_seed(seed)
    cfg = run_config("unused", "unused")
    return build_model(meta, method, dict(TINY_MODEL, **model), cfg["norm_options"]).to(dev).train()


def test_every_tensor_of_a_training_step_is_on_the_gpu(image_data, tmp_path, monkeypatch):
    """The trainer on ``device: cuda``: batch, loss, parameters, gradients and AdamW's moments all on
    the run's GPU (AdamW's step counters stay CPU scalars, as in torch's own AdamW)."""
    seen = {"batch": set(), "loss": set(), "params": set(), "grads": set(), "moments": set(), "counters": set()}
    steps = []

    def spy_forward(step_model, task, xb, yb, *args, **kwargs):
        seen["batch"] |= {xb.device, yb.device}
        loss = forward_loss(step_model, task, xb, yb, *args, **kwargs)
        seen["loss"].add(loss.device)
        return loss

    def spy_backward(model, opt, loss, grad_clip):
        backward_step(model, opt, loss, grad_clip)
        seen["params"] |= {p.device for p in model.parameters()}
        seen["grads"] |= {p.grad.device for p in model.parameters() if p.grad is not None}
        for state in opt.state.values():
            seen["moments"] |= {state["exp_avg"].device, state["exp_avg_sq"].device}
            seen["counters"].add(state["step"].device)
        steps.append(1)

    monkeypatch.setattr(train_mod, "forward_loss", spy_forward)
    monkeypatch.setattr(train_mod, "backward_step", spy_backward)
    cfg = run_config(image_data, tmp_path / "run", method="autonorm_s", epochs=1)
    cfg["runtime"]["device"] = "cuda"
    metrics = train_run(cfg)
    gpu = torch.device(json.loads((tmp_path / "run" / "env.json").read_text())["device"])
    assert gpu.type == "cuda" and metrics["cost"]["device"] == str(gpu)
    assert len(steps) == 3  # 48 training images, batch 16
    for what in ("batch", "loss", "params", "grads", "moments"):
        assert seen[what] == {gpu}, what
    assert seen["counters"] == {torch.device("cpu")}


def test_bf16_autocast_step_loss_matches_fp32(image_data, tmp_path):
    """One training step of the same model and batch in fp32 and under bf16 autocast: the forward ran
    in bf16, the loss is within BF16_LOSS_RTOL of fp32's, and the weights and their gradients stay
    fp32 (autocast casts activations, not parameters). Selectors frozen, no dropout: no random draw,
    so both see the same function. Then the trainer itself with runtime.bf16 on the GPU."""
    dev = torch.device("cuda")
    meta, tcfg, task, xb, yb = _one_batch(image_data, dev)
    smoothing = float(tcfg["label_smoothing"])
    losses, out_dtypes = {}, []
    for name, autocast in (("fp32", False), ("bf16", True)):
        model = _tiny_model(meta, "autonorm_s", dev, dropout=0.0, drop_path=0.0)
        freeze_selectors(model)
        opt = make_optimizer(model, tcfg)
        hook = model.register_forward_hook(lambda m, i, out: out_dtypes.append(out.dtype))
        losses[name] = forward_loss(model, task, xb, yb, smoothing, autocast)
        hook.remove()
        backward_step(model, opt, losses[name], tcfg["grad_clip"])
        assert all(p.dtype == torch.float32 for p in model.parameters())
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        assert grads and all(g.dtype == torch.float32 and torch.isfinite(g).all() for g in grads)
    assert out_dtypes == [torch.float32, torch.bfloat16]
    fp32, bf16 = float(losses["fp32"]), float(losses["bf16"])
    assert bf16 != fp32  # the autocast step rounded differently: it ran in bf16
    assert bf16 == pytest.approx(fp32, rel=BF16_LOSS_RTOL)

    cfg = run_config(image_data, tmp_path / "run", method="frozen_ln", epochs=1)
    cfg["runtime"].update(device="cuda", bf16=True)
    metrics = train_run(cfg)
    assert metrics["status"] == "ok" and metrics["cost"]["device"].startswith("cuda")
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert math.isfinite(history[0]["train_loss"])


def test_compiled_autonorm_step_matches_eager(image_data):
    """The trainer's step through ``torch.compile`` (runtime.compile) and eagerly, from the same
    weights, batch and Gumbel noise (``fallback_random``: the compiled graph draws its random numbers
    as eager does): the loss and every gradient agree at float tolerance. Compiled, the norms run
    their straightforward forms; eagerly, the hand-written kernels."""
    import torch._inductor.config as inductor_config

    dev = torch.device("cuda")
    meta, tcfg, task, xb, yb = _one_batch(image_data, dev)
    smoothing = float(tcfg["label_smoothing"])
    eager = _tiny_model(meta, "autonorm", dev, dropout=0.0, drop_path=0.0)
    compiled = copy.deepcopy(eager)
    runs = {"eager": (eager, eager), "compiled": (compiled, torch.compile(compiled))}
    losses = {}
    with inductor_config.patch(fallback_random=True):
        for name, (model, step_model) in runs.items():
            opt = make_optimizer(model, tcfg)
            torch.manual_seed(1)  # the same Gumbel noise in both
            losses[name] = forward_loss(step_model, task, xb, yb, smoothing, False)
            backward_step(model, opt, losses[name], tcfg["grad_clip"])
    assert float(losses["compiled"]) == pytest.approx(float(losses["eager"]), rel=COMPILE_LOSS_RTOL)
    named = dict(eager.named_parameters())
    checked = 0
    for name, p in compiled.named_parameters():
        if named[name].grad is None:
            assert p.grad is None, name
            continue
        torch.testing.assert_close(p.grad, named[name].grad, rtol=COMPILE_GRAD_RTOL, atol=COMPILE_GRAD_ATOL,
                                   msg=lambda m, n=name: f"gradient of {n}: {m}")
        checked += 1
    assert checked > 0 and any(".selector." in n for n, p in compiled.named_parameters() if p.grad is not None)


CLAIMER = """
import json, os, sys, torch
torch.cuda.init()  # the GPUs this job may see are fixed here (CUDA_VISIBLE_DEVICES is read once)
os.environ.pop("CUDA_VISIBLE_DEVICES", None)  # so resolve_device claims a slot, as on a GPU box without SLURM
from autonorm.run import device
dev = device.resolve_device("cuda")
x = torch.randn(512, 512, device=dev)
total = float((x @ x).sum())  # a CUDA context and a kernel on the claimed GPU
print(json.dumps({"claimed": list(device._claimed), "device": str(dev), "finite": total == total}), flush=True)
sys.stdin.readline()  # hold the slot, and the CUDA context, until the test lets go
"""


def test_two_runs_sharing_one_gpu_take_different_slots(gpu_slots):
    """Two jobs at once with runtime.runs_per_gpu 2 (AUTONORM_RUNS_PER_GPU, as the workflow exports
    it): each claims its own (GPU, slot), slot-major, and both compute on the GPU while the other
    holds its context (a GPU in an exclusive compute mode would refuse the second)."""
    env = dict(os.environ, AUTONORM_RUNS_PER_GPU="2", AUTONORM_GPU_LOCK_DIR=str(gpu_slots),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    jobs, got = [], []
    try:
        for _ in range(2):
            job = subprocess.Popen([sys.executable, "-c", CLAIMER], env=env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            jobs.append(job)
            line = job.stdout.readline()
            assert line, f"the job ended without claiming a slot:\n{job.communicate(timeout=60)[1]}"
            got.append(json.loads(line))
    finally:
        for job in jobs:
            if job.poll() is None:
                job.communicate("\n", timeout=60)
    n = torch.cuda.device_count()
    expected = [(0, 0), (1, 0)] if n >= 2 else [(0, 0), (0, 1)]  # slot 0 of every GPU before slot 1 of any
    assert [tuple(g["claimed"]) for g in got] == expected
    assert [g["device"] for g in got] == [f"cuda:{gpu}" for gpu, _ in expected]
    assert all(g["finite"] for g in got)
    assert sorted(p.name for p in gpu_slots.iterdir()) == sorted(
        f"autonorm-gpu{gpu}-slot{slot}.lock" for gpu, slot in expected)


def test_a_checkpoint_written_on_the_gpu_resumes_on_the_cpu_and_back(image_data, tmp_path, monkeypatch, caplog):
    """runtime.device auto (the same run wherever it trains): epoch 1 on the GPU, epoch 2 resumed on a
    CPU node, epoch 3 back on the GPU. Each resume continues the previous epoch's weights and
    optimizer state (AdamW's step counters count every step of the three epochs)."""
    cfg = run_config(image_data, tmp_path / "run", method="autonorm_s", epochs=3, t_freeze=2, eps_h=0.0)
    cfg["runtime"]["device"] = "auto"
    run = tmp_path / "run"
    load = lambda: torch.load(run / "checkpoint.pt", weights_only=True)  # noqa: E731 - tensors where saved

    assert train_run(cfg, stop_after_epochs=1) is None
    ckpt = load()
    assert ckpt["epoch"] == 1 and all(t.is_cuda for t in ckpt["model"].values())

    with monkeypatch.context() as m:  # a node without a GPU: device auto resolves to the CPU
        m.setattr(train_mod, "resolve_device", lambda *a, **k: torch.device("cpu"))
        assert train_run(cfg, stop_after_epochs=2) is None
    env = json.loads((run / "env.json").read_text())
    assert env["device"] == "cpu" and env["resumed_from_epoch"] == 1
    ckpt = load()
    assert ckpt["epoch"] == 2 and not any(t.is_cuda for t in ckpt["model"].values())
    assert not any(s["exp_avg"].is_cuda for s in ckpt["optimizer"]["state"].values())

    metrics = train_run(cfg)
    env = json.loads((run / "env.json").read_text())
    assert env["device"].startswith("cuda") and env["resumed_from_epoch"] == 2
    assert metrics["status"] == "ok" and metrics["epochs"] == 3
    history = json.loads((run / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2, 3] and all(math.isfinite(h["train_loss"]) for h in history)
    assert [h["frozen"] for h in history] == [False, True, True]  # the freeze of epoch 2 (on the CPU) held
    ckpt = load()
    assert ckpt["step"] == 9  # 3 steps an epoch
    counters = {int(s["step"]) for s in ckpt["optimizer"]["state"].values()}
    assert counters and max(counters) == 9  # the optimizer state came along both ways
    assert sum("data-order generator" in r.getMessage() for r in caplog.records) == 2  # each device change said so


@pytest.mark.parametrize("task", ["image_classification", "regression"])
def test_evaluation_on_the_gpu_gives_the_cpus_metrics(tmp_path, task):
    """A run trained on the CPU, evaluated on both: regression metrics within float rounding,
    accuracies (test and rotated test) within one test sample."""
    data = make_processed(tmp_path / "data", task)
    train_run(run_config(data, tmp_path / "run", method="autonorm_s", epochs=2))
    cpu = evaluate_run(tmp_path / "run", data, None, "cpu")
    gpu = evaluate_run(tmp_path / "run", data, None, "cuda")
    if task == "regression":
        assert set(gpu["test"]) == {"rmse", "mae"}
        for k in ("rmse", "mae"):
            assert gpu["test"][k] == pytest.approx(cpu["test"][k], rel=1e-4), k
        return
    one_sample = 100.0 / len(load_processed(data).split("test")[1])
    assert gpu["test"]["accuracy"] == pytest.approx(cpu["test"]["accuracy"], abs=one_sample + 1e-9)
    assert gpu["rotation"]["accuracy"] == pytest.approx(cpu["rotation"]["accuracy"], abs=one_sample + 1e-9)
