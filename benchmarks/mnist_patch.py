"""A training step of the MNIST study's model at patch 4 against patch 7, fp32 against bf16 autocast.

    python benchmarks/mnist_patch.py            # frozen_ln and autonorm_s (per_block), 1 thread
    python benchmarks/mnist_patch.py --quick

The paper's ViT-Lite 8 x 128 on 28 x 28 x 1 images, batch 128: patch 7 gives 16 tokens, the paper's
patch 4 gives 49. Before a study at patch 4 fixes its `runtime` (part of each run's identity), this
measures what one step costs in each setting, interleaved in one process after warm-up, as the
median process CPU time of one thread (robust to other load). bf16 rows run only where the CPU has
native bf16, as the trainer allows (autonorm.run.device.bf16_autocast). The step is the trainer's:
forward under autocast where asked, the loss, backward, clipping, AdamW.
"""

from __future__ import annotations

import _common as C
import torch
from threads import MNIST_META
from torch import nn

from autonorm.models import build_model
from autonorm.run.device import cpu_has_native_bf16
from autonorm.run.optim import make_optimizer
from autonorm.run.tasks import Task
from autonorm.run.train import backward_step, forward_loss


def make_step(method: str, patch: int, bf16: bool, placement: str):
    model_cfg, train_cfg = C.family_cfg("vision")
    model_cfg["patch_size"] = patch
    torch.manual_seed(0)
    opts = C.norm_options()
    if method not in ("frozen_ln", "dyt"):
        opts["placement"] = placement
    model = build_model(MNIST_META, method, model_cfg, opts)
    model.train()
    opt = make_optimizer(model, train_cfg)
    task = Task(MNIST_META, train_cfg, torch.device("cpu"))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(train_cfg["batch_size"], 1, 28, 28, generator=g)
    y = nn.functional.one_hot(torch.randint(0, 10, (x.shape[0],), generator=g), 10).float() * 0.9 + 0.01

    def step():
        loss = forward_loss(model, task, x, y, 0.1, bf16)
        backward_step(model, opt, loss, train_cfg.get("grad_clip"))

    return step


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--methods", nargs="+", default=["frozen_ln", "autonorm_s"])
    p.add_argument("--placement", default="per_block", choices=["per_block", "per_sublayer"])
    args = p.parse_args(argv)
    repeats, warmup = args.repeats or (5 if args.quick else 11), args.warmup or 2
    C.setup_torch(args.threads, not args.no_malloc_tuning)
    settings = [("patch 7", 7, False), ("patch 4", 4, False)]
    if cpu_has_native_bf16():
        settings.append(("patch 4 bf16", 4, True))
    else:
        print("this CPU has no native bf16: the bf16 row is left out (the trainer refuses it here)")
    print("# MNIST study step: patch 4 against patch 7, fp32 against bf16 (benchmarks/mnist_patch.py)")
    print(f"machine: {C.machine_line()}; ViT-Lite 8x128, 28x28x1, batch 128, selectors {args.placement}; "
          f"{repeats} timed repeats after {warmup} warm-up, interleaved, median process CPU time")
    steps = {(m, name): make_step(m, patch, bf16, args.placement) for m in args.methods for name, patch, bf16 in settings}
    times = C.interleaved(steps, repeats, warmup)
    rows = []
    for m in args.methods:
        base = C.med(times.cpu[(m, "patch 7")])
        p4 = C.med(times.cpu[(m, "patch 4")])
        for name, _, _ in settings:
            t = C.med(times.cpu[(m, name)])
            rows.append([m, name, f"{1000 * t:.0f}", f"{t / base:.2f}x", f"{p4 / t:.2f}x", C.spread(times.cpu[(m, name)]),
                         f"{422 * t / 60:.1f}"])
    print(C.table(rows, ["method", "setting", "ms/step", "/ patch 7", "patch 4 fp32 /", "spread",
                         "min per epoch (422 steps)"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
