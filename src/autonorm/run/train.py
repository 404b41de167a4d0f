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
from ..io_utils import RunFolderBusy, WriteFailed, read_json, sha256_file, write_json_atomic
from .malloc_tuning import keep_freed_memory
from ..methods import get_method
from ..metrics import VAL_METRIC
from ..models import build_model
from ..layers.norms import freeze_selectors
from .optim import lr_at, make_optimizer
from ..provenance import env_info, run_config_hash
from .runlock import RunFolderLock
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
    runtime = cfg.get("runtime", {})
    _setup_determinism(int(cfg["seed"]), runtime)
    device = resolve_device(runtime.get("device", "auto"))
    try:  # on CUDA, or on a CPU with native bf16; refused elsewhere (not silently trained in fp32)
        autocast = bf16_autocast(bool(runtime.get("bf16", False)), device.type)
    except ValueError as e:
        raise ConfigError(f"{out_dir}: {e}") from None

    data, ckpt = _open_run_folder(cfg, out_dir, chash, device)
    run = _Training(cfg, method, data, device, autocast, chash)
    if ckpt is not None:
        run.resume(ckpt)
        log.info("resumed from the checkpoint of epoch %d in %s", run.start_epoch, out_dir)
        del ckpt
    log.info("%s / %s / seed %s: %d params, %d epochs x %d steps on %s (config hash %s)", cfg["dataset"],
             cfg["method"], cfg["seed"], cost.count_params(run.model), run.epochs, run.steps_per_epoch, device,
             chash)

    for epoch in range(run.start_epoch + 1, run.epochs + 1):
        t0 = time.time()
        train_loss = run.train_epoch(epoch, out_dir)
        run.end_epoch(epoch, train_loss, t0, out_dir)
        if stop_after_epochs is not None and epoch >= stop_after_epochs and epoch < run.epochs:
            log.info("stopping after epoch %d as asked (simulated preemption)", epoch)
            return None

    return _finish(cfg, chash, run.model, run.task, data, device, autocast, run.history, run.freeze,
                   run.train_time, t_start)


def _open_run_folder(cfg: dict, out_dir: Path, chash: str, device: torch.device):
    """(the processed data, the checkpoint to resume or None), the folder's old outputs removed
    and its config.json and env.json written."""
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
    # a resumed run's epochs trained in more than one attempt, perhaps on other machines: env.json describes
    # this one and keeps what the earlier ones' said (their CPU and thread count rounded those epochs' floats)
    earlier = earlier_attempts(out_dir) if ckpt is not None else []
    invalidate_outputs(out_dir, resuming=ckpt is not None)
    if ckpt is not None:
        write_json_atomic(out_dir / "history.json", ckpt["history"])  # may lag the checkpoint after a kill
    write_json_atomic(out_dir / "config.json", cfg)
    write_json_atomic(out_dir / "env.json", env_info(device) | {
        "config_hash": chash, "data_identity": data_id,
        "resumed_from_epoch": ckpt["epoch"] if ckpt is not None else None, "earlier_attempts": earlier})
    return data, ckpt


#: what env.json keeps of each earlier attempt of a resumed run
ATTEMPT_KEYS = ("time_utc", "host", "cpu", "torch_threads", "device", "device_name", "resumed_from_epoch")


def earlier_attempts(out_dir: Path) -> list[dict]:
    """The attempts before this one, oldest first, from the run folder's env.json (the last attempt's, which
    holds its own earlier ones); [] where it is missing or unreadable (then the checkpoint's epochs are of
    unknown provenance, said in the log)."""
    try:
        env = read_json(out_dir / "env.json")
    except (OSError, ValueError):
        log.warning("%s: no readable env.json beside the checkpoint; the earlier attempts' machines are unknown",
                    out_dir)
        return []
    return list(env.get("earlier_attempts") or []) + [{k: env.get(k) for k in ATTEMPT_KEYS if k in env}]


class _Training:
    """One run as it trains: its data, model, optimizer, schedule and random streams, and what
    changes epoch by epoch (the step, the time trained, the history, the freeze record).

    Built in the order of the run's random draws, which a resumed run must repeat: the model's
    initial weights (torch's global generator, seeded by ``_setup_determinism``), then the batch
    order's generator and the augmentations' ``random.Random``."""

    def __init__(self, cfg: dict, method, data, device: torch.device, autocast: bool, chash: str):
        self.cfg, self.chash, self.data_id = cfg, chash, data.identity
        self.device, self.autocast = device, autocast
        tcfg = self.tcfg = cfg["train"]
        acfg = self.acfg = cfg.get("autonorm", {})
        runtime = cfg.get("runtime", {})
        meta = data.meta
        self.x_tr, self.y_tr = data.split("train", device=device)
        self.x_va, self.y_va = data.split("val", device=device)
        self.task = Task(meta, tcfg, device)

        self.model = build_model(meta, cfg["method"], cfg["model"], cfg.get("norm_options", {})).to(device)
        self.step_model = (torch.compile(self.model) if runtime.get("compile") and device.type == "cuda"
                           else self.model)
        self.opt = make_optimizer(self.model, tcfg)
        # None unless a distillation variant
        self.distiller = Distiller.from_run_config(cfg, meta, device, self.data_id)

        self.epochs, self.bs = int(tcfg["epochs"]), int(tcfg["batch_size"])
        # (ours, off by default) batches of similar length for token tasks: less padding computed
        self.lengths = (token_lengths(self.x_tr, meta.get("pad_id", 0))
                        if tcfg.get("length_batching") and self.task.kind in TOKEN_TASKS else None)
        self.steps_per_epoch = batches_per_epoch(self.x_tr.shape[0], self.bs, self.lengths is not None)
        self.total_steps = self.epochs * self.steps_per_epoch
        self.warmup_steps = int(round(tcfg.get("warmup_epochs", 0) * self.steps_per_epoch))
        self.freeze_enabled = bool(method.freeze_selectors and acfg.get("freeze_enabled", True))
        self.freeze = {"enabled": self.freeze_enabled, "t_freeze": acfg.get("t_freeze"), "eps_h": acfg.get("eps_h"),
                       "froze": False, "epoch": None, "entropy_at_decision": None, "config_hash": chash}

        self.gen = torch.Generator(device=device)
        self.gen.manual_seed(int(cfg["seed"]))
        self.rng = random.Random(int(cfg["seed"]))
        self.history: list[dict] = []
        self.start_epoch, self.step, self.train_time = 0, 0, 0.0
        self.metric_name, _ = VAL_METRIC[self.task.kind]
        self.smoothing = float(tcfg.get("label_smoothing", 0.0))

    def resume(self, ckpt: dict) -> None:
        """Continue from a checkpoint: weights, optimizer, history, freeze record, step and random streams."""
        if ckpt["freeze"]["froze"]:
            freeze_selectors(self.model)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["optimizer"])
        self.history, self.freeze = ckpt["history"], ckpt["freeze"]
        self.start_epoch, self.step, self.train_time = ckpt["epoch"], ckpt["step"], ckpt["train_time_s"]
        set_rng_state(ckpt["rng"], self.gen, self.rng)

    def train_epoch(self, epoch: int, out_dir: Path) -> float:
        """One pass over the training set; the mean training loss. A NaN/inf loss writes failed.json
        and raises TrainingDiverged."""
        cfg, tcfg, device, task = self.cfg, self.tcfg, self.device, self.task
        self.model.train()
        batches = epoch_batches(self.x_tr.shape[0], self.bs, self.gen, device, self.lengths)
        assert len(batches) == self.steps_per_epoch
        loss_sum = torch.zeros((), device=device)
        for b, idx in enumerate(batches):
            xb, yb = task.trim_padding(self.x_tr[idx], self.y_tr[idx])
            xb, yb = task.augment(task.inputs(xb), yb, self.gen, self.rng)
            for group in self.opt.param_groups:
                group["lr"] = lr_at(self.step, self.total_steps, self.warmup_steps, tcfg["lr"], tcfg.get("min_lr", 0.0))
            loss = forward_loss(self.step_model, task, xb, yb, self.smoothing, self.autocast, self.distiller)
            if not torch.isfinite(loss):
                msg = (f"{cfg['dataset']}/{cfg['method']}/seed{cfg['seed']}: loss is {float(loss.detach())} "
                       f"at epoch {epoch}, step {b + 1} (global step {self.step + 1}); no metrics written")
                write_json_atomic(out_dir / "failed.json", {"status": "diverged", "epoch": epoch,
                                                            "step": b + 1, "message": msg,
                                                            "config_hash": self.chash, "data_identity": self.data_id})
                raise TrainingDiverged(msg)
            backward_step(self.model, self.opt, loss, tcfg.get("grad_clip"))
            loss_sum += loss.detach()
            self.step += 1
        return float(loss_sum) / self.steps_per_epoch

    def end_epoch(self, epoch: int, train_loss: float, t0: float, out_dir: Path) -> None:
        """Validate, apply the freeze rule, and record the epoch: history, log line, checkpoint."""
        val_loss, val_metrics, gates = run_eval(self.model, self.task, self.x_va, self.y_va,
                                                int(self.tcfg.get("eval_batch_size", 512)), self.autocast, gates=True)
        self._freeze_rule(epoch, gates)
        epoch_time = time.time() - t0
        self.train_time += epoch_time
        metric_name, freeze = self.metric_name, self.freeze
        self.history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss,
                             "val_metric": val_metrics[metric_name], "val_metric_name": metric_name,
                             "lr": self.opt.param_groups[0]["lr"], "epoch_time_s": epoch_time,
                             "frozen": freeze["froze"], "gates": gates, "config_hash": self.chash})
        gate_txt = (f" H={gates['mean_entropy']:.3f}" + (f" w_dyt={gates['mean_w_dyt']:.3f}"
                                                          if gates.get("mean_w_dyt") is not None else "")
                    if gates else "")
        log.info("epoch %d/%d loss %.4f val_%s %.4f%s%s (%.1fs)", epoch, self.epochs, train_loss, metric_name,
                 val_metrics[metric_name], gate_txt, " [selectors frozen]" if freeze["froze"] else "",
                 epoch_time)
        save_checkpoint({"format": CHECKPOINT_FORMAT, "config_hash": self.chash, "data_identity": self.data_id,
                         "epoch": epoch, "step": self.step, "train_time_s": self.train_time,
                         "model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                         "history": self.history, "freeze": freeze, "rng": rng_state(self.gen, self.rng)}, out_dir)
        write_json_atomic(out_dir / "history.json", self.history)

    def _freeze_rule(self, epoch: int, gates: dict | None) -> None:
        """AutoNorm-S: at epoch t_freeze, record the mean gate entropy and freeze the selectors when
        ``should_freeze`` says so."""
        acfg, freeze = self.acfg, self.freeze
        if self.freeze_enabled and not freeze["froze"] and epoch == int(acfg["t_freeze"]) and gates:
            freeze["entropy_at_decision"] = gates["mean_entropy"]
            if should_freeze(gates["mean_entropy"], epoch, acfg["t_freeze"], acfg["eps_h"]):
                freeze_selectors(self.model)
                freeze.update(froze=True, epoch=epoch)


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
