"""Evaluate one trained run: test metrics, rotation and CIFAR-10-C accuracy, cost.

    autonorm-evaluate --run-dir results/runs/cifar10/autonorm_s/seed0 \
        --data-dir results/data/cifar10 --corruptions results/data/cifar10c \
        --out results/eval/cifar10/autonorm_s/seed0.json

Rotation accuracy is test accuracy on the 90-degree rotated test images (no
rotation augmentation in training). Corruption accuracy is reported for every
corruption x severity, the paper's subset at severity 3 and their mean, and
the mean over all 15 x 5.

With ``--expected-config-hash`` (the workflow passes the hash of the run config
it expects) the run folder must belong to that config: its ``config.json``,
``metrics.json`` (or ``failed.json``) and ``model.json`` must all carry it, or
the evaluation is refused with an error naming the folder and nothing is
written. The eval JSON records the ``config_hash`` it evaluated.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from . import eval_cache
from .device import set_deterministic
from ..io_utils import read_json, write_json_atomic
from ..provenance import run_config_hash

# torch, numpy and the model code are imported inside the functions that evaluate: a run whose
# evaluation its training process already computed (eval_cache) is written without them.

log = logging.getLogger(__name__)

PAPER_CORRUPTIONS = ("gaussian_noise", "motion_blur", "brightness")


class StaleRun(RuntimeError):
    """The run folder does not hold a finished run of the expected config."""


def check_run_folder(run_dir: str | Path, expected_hash: str | None = None,
                     data_dir: str | Path | None = None) -> tuple[dict, str]:
    """The run's config and its config hash, after checking that every output
    of the folder belongs to that config (and to ``expected_hash`` when given), and was
    trained on the processed data in ``data_dir`` as it is now (when given)."""
    run_dir = Path(run_dir)
    cfg_path = run_dir / "config.json"
    if not cfg_path.exists():
        raise StaleRun(f"run folder {run_dir} has no config.json: the run has not started; train it first")
    cfg = read_json(cfg_path)
    chash = run_config_hash(cfg)
    if expected_hash and chash != expected_hash:
        raise StaleRun(f"run folder {run_dir}: config.json has config hash {chash}, expected {expected_hash}: "
                       f"the folder holds a run of other settings; rerun its training job")
    failed = run_dir / "failed.json"
    outputs = [failed] if failed.exists() else [run_dir / "metrics.json", run_dir / "model.json"]
    for p in outputs:
        if p.exists():
            recorded = read_json(p).get("config_hash")
        elif p.name == "model.json":
            recorded = None  # written since outputs carry the config hash; older runs lack it
        else:
            raise StaleRun(f"run folder {run_dir} has no {p.name}: the run has not finished; rerun its training job")
        if recorded is None and expected_hash:
            raise StaleRun(f"run folder {run_dir}: {p.name} records no config hash (written by an older "
                           f"version): it cannot be tied to config {expected_hash}; rerun its training job")
        if recorded is not None and recorded != chash:
            raise StaleRun(f"run folder {run_dir}: {p.name} has config hash {recorded} but config.json has "
                           f"{chash}: its outputs are from another run; rerun its training job")
    if data_dir is not None:
        from ..data.integrity import data_identity

        now = data_identity(read_json(Path(data_dir) / "meta.json"), data_dir)
        trained_on = read_json(outputs[0]).get("data_identity")
        if trained_on != now:
            what = ("records no data identity (written by an older version)" if trained_on is None
                    else f"was trained on other data (data identity {trained_on})")
            raise StaleRun(f"run folder {run_dir}: {outputs[0].name} {what}, the processed data in {data_dir} "
                           f"is {now}: a data setting, the split or a raw file changed since; rerun its "
                           f"training job")
    return cfg, chash


def _run_identity(cfg: dict, chash: str) -> dict:
    """What ties an eval JSON to its run: the config hash, and the ablation labels when present."""
    ident = {"config_hash": chash}
    for key in ("variant", "same_run_as"):
        if cfg.get(key) is not None:
            ident[key] = cfg[key]
    return ident


def accuracy_on(model, task, x_uint8, y, batch_size: int) -> float:
    import torch

    from ..metrics import classification_metrics

    preds = []
    with torch.no_grad():
        for i in range(0, x_uint8.shape[0], batch_size):
            preds.append(model(task.inputs(x_uint8[i:i + batch_size])).argmax(-1))
    return classification_metrics(torch.cat(preds), y, task.num_classes)["accuracy"]


def corruption_accuracies(model, task, corr_dir: str | Path, device, batch_size: int) -> tuple[dict, dict]:
    import numpy as np
    import torch

    from ..data import CORRUPTIONS, load_corruptions

    meta, arrays, labels = load_corruptions(corr_dir)
    n = int(meta["n_per_severity"])
    y_all = torch.as_tensor(np.asarray(labels, dtype=np.int64))
    out = {}
    for name in CORRUPTIONS:
        out[name] = {}
        imgs = arrays[name]
        for s in range(1, int(meta.get("severities", 5)) + 1):
            # official layout: NHWC uint8, severity s in rows (s-1)*n .. s*n
            # a writable copy: the set is memory-mapped read-only, which torch warns about
            block = torch.from_numpy(np.require(imgs[(s - 1) * n:s * n], requirements=["C", "W"])
                                     ).permute(0, 3, 1, 2)
            out[name][str(s)] = accuracy_on(model, task, block.to(device), y_all[(s - 1) * n:s * n], batch_size)
    return out, meta


def summarise_corruptions(acc: dict, severity: int = 3) -> dict:
    import numpy as np

    s = str(severity)
    summary = {f"{c}_s{s}": acc[c][s] for c in PAPER_CORRUPTIONS}
    summary[f"mean_s{s}"] = float(np.mean([acc[c][s] for c in PAPER_CORRUPTIONS]))
    summary["mean_all"] = float(np.mean([v for c in acc.values() for v in c.values()]))
    return summary


def evaluate_run(run_dir: str | Path, data_dir: str | Path, corr_dir: str | Path | None = None,
                 device_name: str = "auto", batch_size: int = 1000, severity: int = 3,
                 expected_hash: str | None = None) -> dict:
    from ..data import load_processed
    from .device import resolve_device
    from .tasks import Task, load_trained_model, run_eval

    run_dir = Path(run_dir)
    cfg, chash = check_run_folder(run_dir, expected_hash, data_dir)
    metrics = read_json(run_dir / "metrics.json")
    device = resolve_device(device_name)
    data = load_processed(data_dir)
    task = Task(data.meta, cfg["train"], device)
    model = load_trained_model(run_dir, data.meta, device)
    x_te, y_te = data.split("test", device=device)
    _, test, _ = run_eval(model, task, x_te, y_te, batch_size)
    result = {"dataset": metrics["dataset"], "method": metrics["method"], "seed": metrics["seed"],
              "status": "ok", "standin": bool(data.meta.get("standin", False)), "task": task.kind, "test": test,
              "rotation": None, "corruptions": None, "corruption_summary": None,
              "corruption_generated": None, "cost": metrics["cost"], **_run_identity(cfg, chash),
              "data_identity": metrics.get("data_identity")}
    if task.kind == "image_classification":
        x_rot, y_rot = data.split("test_rot90", device=device)
        result["rotation"] = {"accuracy": accuracy_on(model, task, x_rot, y_rot, batch_size)}
    if corr_dir:
        acc, cmeta = corruption_accuracies(model, task, corr_dir, device, batch_size)
        result["corruptions"] = acc
        result["corruption_summary"] = summarise_corruptions(acc, severity)
        result["corruption_generated"] = bool(cmeta.get("generated", False))
        result["corruption_source"] = cmeta.get("source")
    return result


def precompute_in_training_process(cfg: dict, device_type: str) -> Path | None:
    """In a training job that ran on CPU: evaluate the finished run as the workflow's evaluate job
    would (same function, batch size, severity and thread count, the model read back from
    ``model.pt``, the corruption set if it is already built) and store it for that job
    (eval_cache). Returns the file, or None when the run is not eligible (not CPU, no thread
    count) or an input changed while it evaluated."""
    import torch

    threads = (cfg.get("runtime") or {}).get("threads")
    if device_type != "cpu" or not threads:
        return None
    ecfg = cfg.get("evaluation", {})
    batch_size = int(ecfg.get("corruption_batch_size", 1000))
    severity = int(ecfg.get("corruption_severity", 3))
    corruptions = eval_cache.corruption_set_beside(cfg["data_dir"])
    key = eval_cache.eval_key(cfg["out_dir"], cfg["data_dir"], corruptions, "cpu", batch_size, severity,
                              int(threads))
    # as in a fresh autonorm-evaluate process: torch's default (non-deterministic-mode) kernels
    det = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    old_threads = torch.get_num_threads()
    set_deterministic(False)
    torch.set_num_threads(int(threads))
    try:
        result = evaluate_run(cfg["out_dir"], cfg["data_dir"], corruptions, "cpu", batch_size, severity,
                              run_config_hash(cfg))
        path = eval_cache.store(key, cfg["out_dir"], cfg["data_dir"], corruptions, result)
        if path is None:
            log.warning("an input of the evaluation (a file it read, or this package's source code) "
                        "changed while the training process ran; nothing stored, the evaluate job "
                        "will evaluate from scratch")
        return path
    finally:
        set_deterministic(det, warn_only=warn_only)
        torch.set_num_threads(old_threads)


def main(argv: list[str] | None = None) -> int:
    """The command line (``autonorm-evaluate``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from ..cli import guarded

    return guarded("autonorm-evaluate", _main, argv)


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-dir", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--corruptions", help="corruption set folder (official CIFAR-10-C layout)")
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="auto")
    p.add_argument("--batch-size", type=int, default=1000)
    p.add_argument("--severity", type=int, default=3, help="severity of the paper's corruption table")
    p.add_argument("--threads", type=int)
    p.add_argument("--expected-config-hash", metavar="HASH",
                   help="refuse unless the run folder holds a run of this config (provenance.run_config_hash)")
    p.add_argument("--recompute", action="store_true",
                   help=f"evaluate from scratch even when the training process stored this evaluation "
                        f"({eval_cache.PRECOMPUTED})")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(message)s")
    eval_cache.pin_code_fingerprint()  # the code this process runs (eval_cache)
    try:
        cfg, chash = check_run_folder(args.run_dir, args.expected_config_hash, args.data_dir)
    except StaleRun as e:
        log.error("%s", e)
        print(f"autonorm-evaluate: {e}", file=sys.stderr)
        return 2
    failed = Path(args.run_dir) / "failed.json"
    if failed.exists():
        # A diverged run has no model to evaluate: record it so the report lists it.
        info = read_json(failed)
        result = {"dataset": cfg["dataset"], "method": cfg["method"], "seed": cfg["seed"],
                  "status": "diverged", "message": info.get("message"), **_run_identity(cfg, chash)}
        write_json_atomic(args.out, result)
        log.warning("run diverged: %s", info.get("message"))
        return 0
    result, why = (None, "--recompute") if args.recompute else eval_cache.lookup(
        args.run_dir, args.data_dir, args.corruptions, args.device, args.batch_size, args.severity, args.threads)
    if result is not None:
        log.info("using the evaluation its training process computed (%s; %s)", eval_cache.PRECOMPUTED, why)
    else:
        log.info("evaluating from scratch (%s)", why)
        import torch

        from .malloc_tuning import keep_freed_memory

        keep_freed_memory()
        if args.threads:
            torch.set_num_threads(args.threads)
        result = evaluate_run(args.run_dir, args.data_dir, args.corruptions, args.device, args.batch_size,
                              args.severity, args.expected_config_hash)
    write_json_atomic(args.out, result)
    log.info("%s", json.dumps({k: result[k] for k in ("test", "rotation", "corruption_summary")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
