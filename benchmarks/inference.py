"""Inference: a frozen AutoNorm-S at evaluation against frozen_ln, per backbone, at paper size.

    python benchmarks/inference.py            # ~1-2 minutes on 2 cores
    python benchmarks/inference.py --quick
    python benchmarks/inference.py --eval-batch   # the config's eval_batch_size instead of the train batch
    python benchmarks/inference.py --compile      # + both models under torch.compile (needs a C++ compiler)
    python benchmarks/inference.py --run-dir results/runs/mnist/autonorm_s/seed0 --data-dir results/data/mnist
                                              # + a trained run, and its export (autonorm.run.export)

An eval forward under torch.no_grad() (what autonorm.run.cost.latency_ms_per_batch and the evaluator do),
on the backbone's batch; interleaved, warm, median. At evaluation a selector uses
softmax(logits / tau) with no noise, so a frozen AutoNorm-S costs what an unfrozen one does.

Paper-size models are randomly initialised: their gates mix (w near 0.5), so both branches are
needed and the export cannot drop anything. The export is measured on a trained run
(--run-dir): frozen_ln is the same architecture with LayerNorm (a norm's cost does not depend on
its weights), and the exported model's test metric change is printed beside its time.
"""

from __future__ import annotations

import shutil

import _common as C
import torch
from torch.utils.flop_counter import FlopCounterMode

from autonorm.layers import kernels, norms
from autonorm.models import build_model

VARIANTS = ["frozen_ln", "dyt", "autonorm_s [frozen]", "autonorm_s [frozen, straightforward]"]
TARGETS = {"vision": 1.08, "text": 1.05, "tabular": 1.08}  # the issue "Speed"
COMPILED = ["frozen_ln [compiled]", "autonorm_s [frozen, compiled]"]


def _forward_fn(model, x, fast=True):
    def fwd():
        with torch.no_grad(), kernels.fast_paths(fast):
            model(x)
    return fwd


def _flops(model, x) -> int:
    fc = FlopCounterMode(display=False)
    with torch.no_grad(), fc:
        model(x[:1])
    return fc.get_total_flops()


def _rows(times, names, bs, flops=None, base="frozen_ln"):
    bw, bc = C.med(times[base]), C.med(times.cpu[base])
    rows = []
    for v in names:
        w, c = C.med(times[v]), C.med(times.cpu[v])
        row = [v, f"{w * 1000:.1f}", f"{w / bw:.3f}", f"{c * 1000:.1f}", f"**{c / bc:.3f}**",
               C.spread(times.cpu[v]), f"{1000 * c / bs:.3f}"]
        if flops is not None:
            row.append(f"{flops[v] / flops[base]:.4f}")
        rows.append(row)
    return rows


HEADER = ["variant", "wall ms/batch", "wall / frozen_ln", "CPU ms/batch", "CPU / frozen_ln", "CPU noise",
          "CPU ms/sample"]


def paper_size(backbone: str, args, repeats: int, warmup: int) -> None:
    meta, family, bs, desc = C.BACKBONES[backbone]
    model_cfg, train_cfg = C.family_cfg(family)
    if args.eval_batch:
        bs = int(train_cfg.get("eval_batch_size", bs))
    x, _ = C.example_batch(backbone, bs)
    names = VARIANTS + (COMPILED if args.compile else [])
    fns, flops = {}, {}
    for v in names:
        torch.manual_seed(0)
        model = build_model(meta, v.split(" ")[0], model_cfg, C.norm_options())
        if "frozen" in v and v.startswith("autonorm"):
            norms.freeze_selectors(model)
        model.eval()
        flops[v] = _flops(model, x)
        if "compiled" in v:
            model = torch.compile(model)
        fns[v] = _forward_fn(model, x, fast="straightforward" not in v)
    times = C.interleaved(fns, repeats, warmup + (2 if args.compile else 0))
    print(f"\n### {backbone}: {desc.rsplit(',', 1)[0]}, eval batch {bs}\n")
    print(C.table(_rows(times, names, bs, flops), HEADER + ["FLOPs / frozen_ln"]))
    c = C.med(times.cpu["autonorm_s [frozen]"]) / C.med(times.cpu["frozen_ln"])
    print(f"\nTarget (issue \"Speed\": frozen autonorm_s <= {TARGETS[backbone]:.2f}x frozen_ln, default path, CPU "
          f"time): {c:.3f}x -> {'MET' if c <= TARGETS[backbone] else 'NOT MET'}")
    if args.compile:
        c = C.med(times.cpu["autonorm_s [frozen, compiled]"]) / C.med(times.cpu["frozen_ln [compiled]"])
        print(f"\ncompiled against compiled: autonorm_s [frozen] / frozen_ln = **{c:.3f}** (CPU time)")


def trained_run(args, repeats: int, warmup: int) -> None:
    """A trained run's model (selectors frozen or not, as trained), its export, and frozen_ln."""
    import json
    from pathlib import Path

    from autonorm.run import export
    from autonorm.data import load_processed
    from autonorm.run.tasks import Task, load_trained_model

    cfg = json.loads((Path(args.run_dir) / "config.json").read_text())
    data = load_processed(args.data_dir)
    cpu = torch.device("cpu")
    task = Task(data.meta, cfg["train"], cpu)
    full = load_trained_model(args.run_dir, data.meta, cpu)
    exported, report = export.export_run(args.run_dir, args.data_dir, args.threshold)
    torch.manual_seed(0)
    ln = build_model(data.meta, "frozen_ln", cfg["model"], cfg.get("norm_options", {})).eval()
    bs = int(cfg["train"].get("eval_batch_size", 512))
    x_te, _ = data.split("test")
    x = task.inputs(x_te[:bs])
    bs = x.shape[0]
    name = f"{cfg['method']} (trained)"
    fns = {"frozen_ln": _forward_fn(ln, x), name: _forward_fn(full, x),
           f"{cfg['method']} exported": _forward_fn(exported, x)}
    times = C.interleaved(fns, repeats, warmup)
    print(f"\n### trained run {args.run_dir}: {cfg['dataset']}, dim {cfg['model'].get('dim')}, "
          f"depth {cfg['model'].get('depth')}, eval batch {bs}\n")
    print(C.table(_rows(times, list(fns), bs), HEADER))
    metric = next(iter(report["test_change"]))
    print(f"\nexport (threshold {report['threshold']:g} on every validation sample): "
          f"{report['dropped']} of {report['gates']} gated norms reduced to one branch "
          f"({', '.join(f'{k}: {v}' for k, v in sorted(report['plan'].items())) or 'none'}); test {metric} "
          f"{report['test_full'][metric]:.4f} -> {report['test_exported'][metric]:.4f} "
          f"(change {report['test_change'][metric]:+.4f})")


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--backbones", nargs="*", default=list(C.BACKBONES), choices=list(C.BACKBONES))
    p.add_argument("--eval-batch", action="store_true", help="use config.yaml eval_batch_size")
    p.add_argument("--compile", action="store_true", help="also time frozen_ln and autonorm_s under torch.compile")
    p.add_argument("--run-dir", help="a trained run folder: time it, its export and frozen_ln")
    p.add_argument("--data-dir", help="the run's processed dataset (with --run-dir)")
    p.add_argument("--threshold", type=float, default=1e-3, help="export threshold (with --run-dir)")
    args = p.parse_args(argv)
    if args.run_dir and not args.data_dir:
        p.error("--run-dir needs --data-dir")
    if args.compile and not any(shutil.which(c) for c in ("g++", "c++", "clang++")):
        p.error("--compile needs a C++ compiler on PATH (torch.compile on CPU generates C++)")
    repeats = args.repeats or (5 if args.quick else 11)
    warmup = args.warmup or (1 if args.quick else 2)
    C.setup_torch(args.threads, not args.no_malloc_tuning)
    print("# Inference (eval forward, no_grad) relative to frozen_ln (benchmarks/inference.py)")
    print(f"machine: {C.machine_line()}; malloc tuning {'off' if args.no_malloc_tuning else 'on'}; "
          f"{repeats} timed repeats after {warmup} warm-up, interleaved, median; "
          f"ratios in bold are process-CPU-time ratios")
    for backbone in args.backbones:
        paper_size(backbone, args, repeats, warmup)
    if args.run_dir:
        trained_run(args, repeats, warmup)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
