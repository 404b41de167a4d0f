"""One training run: dataset x method x seed -> a run folder (see README "Where outputs land").

    autonorm-train --run-config run.json          # or a JSON string
    autonorm-train --config config.yaml --dataset mnist --method autonorm_s --seed 0

The run checkpoints every epoch (atomically, keeping the previous checkpoint)
and resumes from the checkpoint when rerun with the same config; on CPU a
resumed run ends with the same metrics as an uninterrupted one. A run that
does not resume first deletes every output of the folder's previous run, so no
file in the folder can describe another config; every output records the run's
``config_hash``. One process at a time may write a run folder (``.lock``).
A NaN/inf loss stops the run with an error naming the epoch and step and
writes ``failed.json`` instead of metrics.

Exit codes: 0 done (or divergence recorded), 3 diverged, 4 run folder busy,
5 an output could not be written.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from pathlib import Path

import torch
from torch import nn

from . import cost, eval_cache
from .checkpoint import (CHECKPOINT, CHECKPOINT_FORMAT, HASHES, PREVIOUS, clean_stale_temp_files,
                         load_checkpoint, rng_state, save_atomic, save_checkpoint, set_rng_state)
from ..config.run_config import ConfigError, resolve_run_config, run_settings_problems
from ..config.workflow import load_config
from ..data import load_processed
from .device import bf16_autocast, resolve_device, set_deterministic
from .distill import Distiller
from ..io_utils import WriteFailed, sha256_file, write_json_atomic
from .malloc_tuning import keep_freed_memory
from ..methods import get_method
from ..metrics import VAL_METRIC
from ..models import build_model
from ..layers.norms import freeze_selectors
from .optim import lr_at, make_optimizer
from ..provenance import env_info, run_config_hash
from .runlock import RunFolderBusy, RunFolderLock
from .tasks import TOKEN_TASKS, Task, batches_per_epoch, epoch_batches, run_eval, token_lengths

log = logging.getLogger(__name__)
CPU = torch.device("cpu")


class TrainingDiverged(RuntimeError):
    pass


# --------------------------------------------------------------------------- the run folder
#: What a finished or failed run leaves; deleted when a run (re)starts, so a
#: run that fails cannot leave an earlier run's numbers behind.
FINAL_OUTPUTS = ("status.json", "failed.json", "metrics.json", "model.pt", "model.json", "freeze.json",
                 "eval_precomputed.json")
#: Also deleted when the run does not resume: they describe the previous config.
RUN_STATE = ("history.json", CHECKPOINT, PREVIOUS, HASHES, "config.json", "env.json")


def should_freeze(mean_entropy: float, epoch: int, t_freeze: int, eps_h: float) -> bool:
    """AutoNorm-S's freeze rule (the training side's policy; the norms only know how to freeze):
    at the end of epoch ``t_freeze``, freeze when the mean gate entropy has NOT collapsed below
    ``eps_h`` (H >= eps_h); never at other epochs."""
    return int(epoch) == int(t_freeze) and float(mean_entropy) >= float(eps_h)


def invalidate_outputs(out_dir: Path, resuming: bool) -> list[str]:
    """Delete the folder's old outputs before the run writes its config.json."""
    removed = []
    for name in FINAL_OUTPUTS + (() if resuming else RUN_STATE):
        p = out_dir / name
        if p.exists():
            p.unlink()
            removed.append(name)
    if removed and not resuming:
        log.warning("run folder %s held outputs of another config or an earlier attempt; removed %s",
                    out_dir, ", ".join(removed))
    return removed


# --------------------------------------------------------------------------- one training step
def forward_loss(step_model: nn.Module, task: Task, xb: torch.Tensor, yb: torch.Tensor, smoothing: float,
                 autocast: bool, distiller: Distiller | None = None) -> torch.Tensor:
    """The first half of the trainer's step: forward (under bf16 autocast when ``autocast``) and the
    task's loss (plus the distillation term of a distillation variant). ``step_model`` is the model,
    or its ``torch.compile`` wrapper."""
    with torch.autocast(xb.device.type, dtype=torch.bfloat16, enabled=autocast):
        out = step_model(xb)
    loss = task.loss(out, yb, smoothing)
    if distiller is not None:
        loss = distiller.loss(loss, out, xb, yb)
    return loss


def backward_step(model: nn.Module, opt, loss: torch.Tensor, grad_clip: float | None) -> None:
    """The second half, once the loss is known to be finite: gradients, clipping, the AdamW update."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip:
        nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()


# --------------------------------------------------------------------------- the run
def _setup_determinism(seed: int, runtime: dict) -> None:
    if runtime.get("threads"):
        torch.set_num_threads(int(runtime["threads"]))
    torch.manual_seed(seed)
    if runtime.get("deterministic", True):
        set_deterministic(True, warn_only=True, compiling=bool(runtime.get("compile")))


def train_run(cfg: dict, stop_after_epochs: int | None = None) -> dict | None:
    """Train (or resume) one run described by a resolved run config, holding the
    run folder's lock (RunFolderBusy when another process holds it).

    Returns the final metrics, or None when ``stop_after_epochs`` stopped it
    early (used to simulate a preemption in tests).
    """
    with RunFolderLock(cfg["out_dir"]):
        return _train(cfg, stop_after_epochs)


def _train(cfg: dict, stop_after_epochs: int | None) -> dict | None:
    t_start = time.time()
    out_dir = Path(cfg["out_dir"])
    clean_stale_temp_files(out_dir)
    chash = run_config_hash(cfg)
    method = get_method(cfg["method"])
    runtime, tcfg, acfg = cfg.get("runtime", {}), cfg["train"], cfg.get("autonorm", {})
    _setup_determinism(int(cfg["seed"]), runtime)
    device = resolve_device(runtime.get("device", "auto"))
    try:  # on CUDA, or on a CPU with native bf16; refused elsewhere (not silently trained in fp32)
        autocast = bf16_autocast(bool(runtime.get("bf16", False)), device.type)
    except ValueError as e:
        raise ConfigError(f"{out_dir}: {e}") from None

    # the data is part of the run's identity: a checkpoint of the same settings on other data
    # (a changed split, subset or raw file) is not resumed
    try:
        data = load_processed(cfg["data_dir"])
        data_id = data.identity
    except BaseException:
        # no data, no training; but the old outputs of another config or attempt still go
        invalidate_outputs(out_dir, resuming=load_checkpoint(out_dir, CPU, chash) is not None)
        raise
    # read onto the CPU whatever device wrote it: load_state_dict moves weights and optimizer moments to
    # the model's device, while RNG states and AdamW's step counters must stay CPU tensors (a checkpoint
    # written on a GPU resumes on a CPU node and back)
    ckpt = load_checkpoint(out_dir, CPU, chash, data_id)
    invalidate_outputs(out_dir, resuming=ckpt is not None)
    if ckpt is not None:
        write_json_atomic(out_dir / "history.json", ckpt["history"])  # may lag the checkpoint after a kill
    write_json_atomic(out_dir / "config.json", cfg)
    write_json_atomic(out_dir / "env.json", env_info(device) | {
        "config_hash": chash, "data_identity": data_id,
        "resumed_from_epoch": ckpt["epoch"] if ckpt is not None else None})

    meta = data.meta
    x_tr, y_tr = data.split("train", device=device)
    x_va, y_va = data.split("val", device=device)
    task = Task(meta, tcfg, device)

    model = build_model(meta, cfg["method"], cfg["model"], cfg.get("norm_options", {})).to(device)
    step_model = torch.compile(model) if runtime.get("compile") and device.type == "cuda" else model
    opt = make_optimizer(model, tcfg)
    distiller = Distiller.from_run_config(cfg, meta, device, data_id)  # None unless a distillation variant

    epochs, bs = int(tcfg["epochs"]), int(tcfg["batch_size"])
    # (ours, off by default) batches of similar length for token tasks: less padding computed
    lengths = (token_lengths(x_tr, meta.get("pad_id", 0))
               if tcfg.get("length_batching") and task.kind in TOKEN_TASKS else None)
    steps_per_epoch = batches_per_epoch(x_tr.shape[0], bs, lengths is not None)
    total_steps = epochs * steps_per_epoch
    warmup_steps = int(round(tcfg.get("warmup_epochs", 0) * steps_per_epoch))
    freeze_enabled = bool(method.freeze_selectors and acfg.get("freeze_enabled", True))
    freeze = {"enabled": freeze_enabled, "t_freeze": acfg.get("t_freeze"), "eps_h": acfg.get("eps_h"),
              "froze": False, "epoch": None, "entropy_at_decision": None, "config_hash": chash}

    gen = torch.Generator(device=device)
    gen.manual_seed(int(cfg["seed"]))
    rng = random.Random(int(cfg["seed"]))
    history: list[dict] = []
    start_epoch, step, train_time = 0, 0, 0.0

    if ckpt is not None:
        if ckpt["freeze"]["froze"]:
            freeze_selectors(model)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        history, freeze = ckpt["history"], ckpt["freeze"]
        start_epoch, step, train_time = ckpt["epoch"], ckpt["step"], ckpt["train_time_s"]
        set_rng_state(ckpt["rng"], gen, rng)
        log.info("resumed from the checkpoint of epoch %d in %s", start_epoch, out_dir)
        del ckpt

    metric_name, _ = VAL_METRIC[task.kind]
    smoothing = float(tcfg.get("label_smoothing", 0.0))
    log.info("%s / %s / seed %s: %d params, %d epochs x %d steps on %s (config hash %s)", cfg["dataset"],
             cfg["method"], cfg["seed"], cost.count_params(model), epochs, steps_per_epoch, device, chash)

    for epoch in range(start_epoch + 1, epochs + 1):
        t0 = time.time()
        model.train()
        batches = epoch_batches(x_tr.shape[0], bs, gen, device, lengths)
        assert len(batches) == steps_per_epoch
        loss_sum = torch.zeros((), device=device)
        for b, idx in enumerate(batches):
            xb, yb = task.trim_padding(x_tr[idx], y_tr[idx])
            xb, yb = task.augment(task.inputs(xb), yb, gen, rng)
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total_steps, warmup_steps, tcfg["lr"], tcfg.get("min_lr", 0.0))
            loss = forward_loss(step_model, task, xb, yb, smoothing, autocast, distiller)
            if not torch.isfinite(loss):
                msg = (f"{cfg['dataset']}/{cfg['method']}/seed{cfg['seed']}: loss is {float(loss.detach())} "
                       f"at epoch {epoch}, step {b + 1} (global step {step + 1}); no metrics written")
                write_json_atomic(out_dir / "failed.json", {"status": "diverged", "epoch": epoch,
                                                            "step": b + 1, "message": msg,
                                                            "config_hash": chash, "data_identity": data_id})
                raise TrainingDiverged(msg)
            backward_step(model, opt, loss, tcfg.get("grad_clip"))
            loss_sum += loss.detach()
            step += 1
        train_loss = float(loss_sum) / steps_per_epoch
        val_loss, val_metrics, gates = run_eval(model, task, x_va, y_va, int(tcfg.get("eval_batch_size", 512)),
                                                autocast, gates=True)
        if freeze_enabled and not freeze["froze"] and epoch == int(acfg["t_freeze"]) and gates:
            freeze["entropy_at_decision"] = gates["mean_entropy"]
            if should_freeze(gates["mean_entropy"], epoch, acfg["t_freeze"], acfg["eps_h"]):
                freeze_selectors(model)
                freeze.update(froze=True, epoch=epoch)
        epoch_time = time.time() - t0
        train_time += epoch_time
        history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss,
                        "val_metric": val_metrics[metric_name], "val_metric_name": metric_name,
                        "lr": opt.param_groups[0]["lr"], "epoch_time_s": epoch_time,
                        "frozen": freeze["froze"], "gates": gates, "config_hash": chash})
        gate_txt = (f" H={gates['mean_entropy']:.3f}" + (f" w_dyt={gates['mean_w_dyt']:.3f}"
                                                          if gates.get("mean_w_dyt") is not None else "")
                    if gates else "")
        log.info("epoch %d/%d loss %.4f val_%s %.4f%s%s (%.1fs)", epoch, epochs, train_loss, metric_name,
                 val_metrics[metric_name], gate_txt, " [selectors frozen]" if freeze["froze"] else "",
                 epoch_time)
        save_checkpoint({"format": CHECKPOINT_FORMAT, "config_hash": chash, "data_identity": data_id,
                         "epoch": epoch, "step": step,
                         "train_time_s": train_time, "model": model.state_dict(), "optimizer": opt.state_dict(),
                         "history": history, "freeze": freeze, "rng": rng_state(gen, rng)}, out_dir)
        write_json_atomic(out_dir / "history.json", history)
        if stop_after_epochs is not None and epoch >= stop_after_epochs and epoch < epochs:
            log.info("stopping after epoch %d as asked (simulated preemption)", epoch)
            return None

    return _finish(cfg, chash, model, task, data, device, autocast, history, freeze, train_time, t_start)


def _finish(cfg, chash, model, task, data, device, autocast, history, freeze, train_time, t_start) -> dict:
    ident = {"config_hash": chash, "data_identity": data.identity}
    ebs = int(cfg["train"].get("eval_batch_size", 512))
    x_va, y_va = data.split("val", device=device)
    x_te, y_te = data.split("test", device=device)
    _, val_metrics, _ = run_eval(model, task, x_va, y_va, ebs, autocast)
    _, test_metrics, _ = run_eval(model, task, x_te, y_te, ebs, autocast)
    example = task.inputs(x_te[:ebs])
    ecfg = cfg.get("evaluation", {})
    costs = {
        "params": cost.count_params(model),
        "flops_per_sample": cost.flops_per_sample(model, example),
        "latency_ms_per_batch": cost.latency_ms_per_batch(model, example, ecfg.get("latency_repeats", 10)),
        "latency_batch_size": int(example.shape[0]),
        "train_wall_time_s": train_time,
        "device": str(device),
    }
    metrics = {"dataset": cfg["dataset"], "method": cfg["method"], "seed": cfg["seed"], "task": task.kind,
               "family": data.meta.get("family"), "standin": bool(data.meta.get("standin", False)),
               "status": "ok", "epochs": len(history), "test": test_metrics, "val": val_metrics,
               "cost": costs, "wall_time_s": time.time() - t_start, **ident,
               "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out_dir = Path(cfg["out_dir"])
    save_atomic(model.state_dict(), out_dir / "model.pt")
    # every reader of model.pt checks these bytes (tasks.verify_model_file)
    write_json_atomic(out_dir / "model.json", {**ident, "dataset": cfg["dataset"],
                                               "method": cfg["method"], "seed": cfg["seed"],
                                               "epochs": len(history),
                                               "sha256": {"model.pt": sha256_file(out_dir / "model.pt")}})
    write_json_atomic(out_dir / "freeze.json", freeze | ident)
    write_json_atomic(out_dir / "metrics.json", metrics)  # last: its presence means the run is done
    log.info("test %s", json.dumps(test_metrics))
    return metrics


def _precompute_evaluation(cfg: dict, device: str) -> None:
    """Evaluate the finished run here, for the workflow's evaluate job (saves it a torch start-up).
    Best effort: a failure is logged and the evaluate job then evaluates from scratch."""
    from .evaluate import precompute_in_training_process

    try:
        path = precompute_in_training_process(cfg, device.split(":")[0])
    except Exception as e:  # noqa: BLE001 -- training is done; its evaluate job can still evaluate
        log.warning("could not evaluate the run in the training process (%s: %s); its evaluate job will",
                    type(e).__name__, e)
        return
    if path is not None:
        log.info("evaluation for the evaluate job stored in %s", path)


def main(argv: list[str] | None = None) -> int:
    """The command line (``autonorm-train``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from ..cli import guarded

    return guarded("autonorm-train", _main, argv)


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-config", help="resolved run config: a JSON string or a path to a JSON file")
    p.add_argument("--config", help="workflow config.yaml (with --dataset/--method/--seed)")
    p.add_argument("--configfile", action="append", default=[], help="extra config files merged on top")
    p.add_argument("--dataset")
    p.add_argument("--method")
    p.add_argument("--seed", type=int)
    p.add_argument("--out-dir", help="override the run folder")
    p.add_argument("--data-dir", help="override the processed dataset folder")
    p.add_argument("--threads", type=int, help="torch CPU threads (overrides runtime.threads)")
    p.add_argument("--record-divergence", action="store_true",
                   help="on a NaN/inf loss write status.json 'diverged' and exit 0 (the workflow's mode)")
    p.add_argument("--no-precompute-eval", action="store_true",
                   help="on CPU, do not also run the evaluation for the workflow's evaluate job "
                        "(autonorm.run.eval_cache); that job then evaluates from scratch")
    p.add_argument("--stop-after-epochs", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(message)s")
    eval_cache.pin_code_fingerprint()  # the code this process runs, before anyone edits it
    keep_freed_memory()

    if args.run_config:
        text = args.run_config
        cfg = json.loads(Path(text).read_text() if not text.lstrip().startswith("{") else text)
    elif args.config and args.dataset and args.method and args.seed is not None:
        cfg = resolve_run_config(load_config(args.config, *args.configfile), args.dataset, args.method, args.seed)
    else:
        p.error("give --run-config, or --config with --dataset, --method and --seed")
    if args.out_dir:
        cfg["out_dir"] = args.out_dir
    if args.data_dir:
        cfg["data_dir"] = args.data_dir
    if args.threads:
        cfg.setdefault("runtime", {})["threads"] = args.threads
    # the workflow's config check runs the same validation (config.run_config.run_settings_problems)
    problems = run_settings_problems(cfg)
    if problems:
        raise ConfigError("\n".join(f"run config key {k}: {msg}" for k, msg in problems))
    status_path = Path(cfg["out_dir"]) / "status.json"
    chash = run_config_hash(cfg)
    try:
        with RunFolderLock(cfg["out_dir"]):  # status.json too is written under the lock
            try:
                metrics = _train(cfg, args.stop_after_epochs)
            except TrainingDiverged as e:
                log.error("%s", e)
                if not args.record_divergence:
                    return 3
                write_json_atomic(status_path, {"status": "diverged", "message": str(e), "config_hash": chash})
                return 0
            if metrics is not None:
                if not args.no_precompute_eval:
                    _precompute_evaluation(cfg, metrics["cost"]["device"])
                write_json_atomic(status_path, {"status": "ok", "test": metrics["test"], "config_hash": chash,
                                                "data_identity": metrics["data_identity"]})
    except RunFolderBusy as e:
        log.error("%s", e)
        return 4
    except WriteFailed as e:
        log.error("%s", e)
        return 5
    return 0


if __name__ == "__main__":
    sys.exit(main())
