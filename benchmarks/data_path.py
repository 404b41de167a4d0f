"""Data path: loader samples/s against model samples/s (training step), per backbone.

    python benchmarks/data_path.py            # ~2 minutes on 2 cores
    python benchmarks/data_path.py --quick

Loader = exactly what the trainer does per batch with a whole split in memory (autonorm.run.train):
take the next slice of a seeded permutation, index the split (uint8 images / int64 tokens /
float32 features), Task.inputs (normalize_images for images) and Task.augment (random_crop_flip,
label smoothing, MixUp/CutMix for images; nothing for text and tabular), with the family's
config.yaml train settings. Model = one training step of frozen_ln and of autonorm_s at paper size
(benchmarks/step_time.py). The loader must be at least 20x faster than the model.
"""

from __future__ import annotations

import random

import _common as C
import torch

from autonorm.run.tasks import Task
from step_time import build_variant, make_step

SPLIT_SIZE = {"vision": 45_000, "text": 60_000, "tabular": 16_512}  # CIFAR-10 / SST-2 / California train
TARGET = 20.0


def make_loader(backbone: str):
    meta, family, bs, _ = C.BACKBONES[backbone]
    _, train_cfg = C.family_cfg(family)
    n = SPLIT_SIZE[backbone]
    g = torch.Generator().manual_seed(0)
    if backbone == "vision":
        x = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
        y = torch.randint(0, meta["num_classes"], (n,), generator=g)
    elif backbone == "text":
        x = torch.randint(2, meta["vocab_size"], (n, meta["max_len"]), generator=g)
        y = torch.randint(0, meta["num_classes"], (n,), generator=g)
    else:
        x = torch.randn(n, meta["num_features"], generator=g)
        y = torch.randn(n, generator=g)
    task = Task(meta, train_cfg, torch.device("cpu"))
    gen = torch.Generator().manual_seed(0)
    rng = random.Random(0)
    state = {"perm": torch.randperm(n, generator=gen), "b": 0}
    steps = n // bs

    def load():
        if state["b"] >= steps:
            state["perm"], state["b"] = torch.randperm(n, generator=gen), 0
        idx = state["perm"][state["b"] * bs:(state["b"] + 1) * bs]
        state["b"] += 1
        return task.augment(task.inputs(x[idx]), y[idx], gen, rng)

    return load


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--backbones", nargs="+", default=list(C.BACKBONES), choices=list(C.BACKBONES))
    args = p.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 7)
    warmup = args.warmup or 1
    C.setup_torch(args.threads, not args.no_malloc_tuning)
    print("# Data path: loader vs model samples/s (benchmarks/data_path.py)")
    print(f"machine: {C.machine_line()}; model: {repeats} timed steps after {warmup} warm-up; loader: "
          f"{20 * repeats} timed batches; interleaved; medians of process CPU time (wall in brackets)")
    rows, ok = [], True
    for backbone in args.backbones:
        bs = C.BACKBONES[backbone][2]
        load = make_loader(backbone)
        fns = {}
        for v in ("frozen_ln", "autonorm_s"):
            model, opt, train_cfg, fast = build_variant(backbone, v)
            fns[v] = make_step(backbone, model, opt, train_cfg, fast)[0]

        def loader20():  # 20 batches per timed call, so the small loader time is well above timer noise
            for _ in range(20):
                load()

        fns["loader x20"] = loader20
        t = C.interleaved(fns, repeats, warmup)
        lc, lw = C.med(t.cpu["loader x20"]) / 20, C.med(t["loader x20"]) / 20
        for v in ("frozen_ln", "autonorm_s"):
            mc, mw = C.med(t.cpu[v]), C.med(t[v])
            ratio = mc / lc
            ok &= ratio >= TARGET
            rows.append([backbone, v, bs, f"{bs / lc:,.0f} ({bs / lw:,.0f})", f"{bs / mc:,.0f} ({bs / mw:,.0f})",
                         f"**{ratio:,.0f}x** ({mw / lw:,.0f}x)", "yes" if ratio >= TARGET else "NO"])
    print()
    print(C.table(rows, ["backbone", "model", "batch", "loader samples/s", "model samples/s",
                         "loader / model speed", f">= {TARGET:.0f}x"]))
    print(f"\nloader at least {TARGET:.0f}x faster than the model on every backbone: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
