"""GPU: ViT-Lite epoch time at paper size, with/without bf16 autocast and torch.compile, and how
many concurrent runs fit on one GPU.

    python benchmarks/gpu_epoch.py                # 4 variants x 1 timed epoch each
    python benchmarks/gpu_epoch.py --quick        # 1/10 of an epoch per variant, extrapolated
    python benchmarks/gpu_epoch.py --method frozen_ln autonorm_s
    python benchmarks/gpu_epoch.py --quick --json epoch.json   # + the numbers as JSON (benchmarks/gpu_check.sh)

Data: CIFAR-10-sized random uint8 images (50,000 x 3 x 32 x 32, batch 128) held on the GPU,
the trainer's data path (Task.inputs + Task.augment: normalise, crop/flip, MixUp/CutMix) and
training step (forward, loss, backward, grad clipping, AdamW). Epoch time = wall time of all
batches of one epoch after a warm-up epoch fraction (compile happens in the warm-up and is
reported separately). Memory per run = torch.cuda.max_memory_allocated of that variant; runs per
GPU = floor(0.9 x total memory / (peak + CUDA context estimate)), a memory bound only (compute is
shared, so concurrent runs also slow each other down).
Exits with status 2 and a clear message where CUDA is not available.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time

import _common as C
import torch
from torch import nn

from autonorm.models import build_model
from autonorm.run.optim import make_optimizer
from autonorm.run.tasks import Task

N_IMAGES, BATCH = 50_000, 128
CONTEXT_MB = 500  # rough CUDA context + allocator slack per extra process


def run_variant(method: str, bf16: bool, compile_: bool, frac: float, seed: int = 0) -> dict:
    dev = torch.device("cuda")
    meta, family, _, _ = C.BACKBONES["vision"]
    model_cfg, train_cfg = C.family_cfg(family)
    torch.manual_seed(seed)
    model = build_model(meta, method, model_cfg, C.norm_options()).to(dev).train()
    step_model = torch.compile(model) if compile_ else model
    opt = make_optimizer(model, train_cfg)
    task = Task(meta, train_cfg, dev)
    g = torch.Generator(device=dev).manual_seed(seed)
    x = torch.randint(0, 256, (N_IMAGES, 3, 32, 32), dtype=torch.uint8, device=dev, generator=g)
    y = torch.randint(0, 10, (N_IMAGES,), device=dev, generator=g)
    rng = random.Random(seed)
    smoothing = float(train_cfg.get("label_smoothing", 0.0))
    steps = math.ceil(N_IMAGES / BATCH)

    def one_step(idx):
        xb, yb = task.augment(task.inputs(x[idx]), y[idx], g, rng)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            out = step_model(xb)
        loss = task.loss(out, yb, smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), train_cfg.get("grad_clip") or 1e9)
        opt.step()
        return loss.detach()

    perm = torch.randperm(N_IMAGES, device=dev, generator=g)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for b in range(min(20, steps)):  # warm-up (and compilation)
        one_step(perm[b * BATCH:(b + 1) * BATCH])
    torch.cuda.synchronize()
    warm_s = time.perf_counter() - t0
    n = max(1, int(steps * frac))
    t0 = time.perf_counter()
    loss = None
    for b in range(n):
        loss = one_step(perm[(b % steps) * BATCH:((b % steps) + 1) * BATCH])
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated()
    model = step_model = opt = x = y = None  # free the GPU memory before the next measurement
    torch.cuda.empty_cache()
    return {"epoch_s": t * steps / n, "warm_s": warm_s, "peak_mb": peak / 2**20, "loss": float(loss)}


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--method", nargs="+", default=["frozen_ln", "autonorm_s"])
    p.add_argument("--json", metavar="PATH", help="also write every variant's numbers as JSON")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("benchmarks/gpu_epoch.py needs a CUDA GPU: torch.cuda.is_available() is False on this machine "
              f"(torch {torch.__version__}). Nothing was measured.", file=sys.stderr)
        return 2
    frac = 0.1 if args.quick else 1.0
    props = torch.cuda.get_device_properties(0)
    total_mb = props.total_memory / 2**20
    print("# GPU epoch time, ViT-Lite at paper size (benchmarks/gpu_epoch.py)")
    print(f"device: {props.name}, {total_mb:,.0f} MiB; torch {torch.__version__}; {N_IMAGES} images, batch {BATCH}; "
          f"{'1/10 epoch extrapolated' if args.quick else 'one full epoch'} per variant after 20 warm-up steps\n")
    rows, records = [], []
    base = None
    for method in args.method:
        for bf16 in (False, True):
            for comp in (False, True):
                try:
                    r = run_variant(method, bf16, comp, frac)
                except Exception as e:  # e.g. no compiler toolchain for torch.compile
                    rows.append([method, "bf16" if bf16 else "fp32", "yes" if comp else "no", "failed: "
                                 + type(e).__name__, "", "", "", ""])
                    records.append({"method": method, "bf16": bf16, "compile": comp,
                                    "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
                    continue
                base = base or r["epoch_s"]
                fit = int(0.9 * total_mb // (r["peak_mb"] + CONTEXT_MB))
                records.append({"method": method, "bf16": bf16, "compile": comp, **r, "runs_per_gpu": fit})
                rows.append([method, "bf16" if bf16 else "fp32", "yes" if comp else "no", f"{r['epoch_s']:.1f}",
                             f"**{r['epoch_s'] / base:.2f}**", f"{r['warm_s']:.1f}", f"{r['peak_mb']:,.0f}", fit])
    print(C.table(rows, ["method", "autocast", "compile", "epoch s", f"time / {args.method[0]} fp32",
                         "warm-up s (20 steps, incl. compile)", "peak MiB", "concurrent runs (memory bound)"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "total_mib": total_mb, "torch": torch.__version__, "quick": args.quick,
                       "images": N_IMAGES, "batch": BATCH, "variants": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
