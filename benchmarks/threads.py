"""Two one-thread trainings side by side against one two-thread training, on this machine's cores.

    python benchmarks/threads.py             # the mnist_regime backbone (ViT-Lite 8x128, 28x28, patch 7)
    python benchmarks/threads.py --steps 40 --method autonorm_s
    python benchmarks/threads.py --patch 4 --bf16 --method autonorm_s --placement per_block   # mnist_patch4

A long study on a small box runs either one job per core at 1 thread (`--cores 2` with
`runtime.threads: 1`) or one job at a time with all threads. Which finishes more training steps
per second depends on the CPU and the model, so it is measured here before a study starts: the
same number of training steps of the study's model, (a) two processes of 1 thread at once, (b) one
process of N threads, and the throughput of each (steps per second over the whole wall time).
"""

from __future__ import annotations

import multiprocessing as mp
import time

import _common as C
import torch
from torch import nn

from autonorm.models import build_model
from autonorm.run.optim import make_optimizer
from autonorm.run.tasks import Task

MNIST_META = {"name": "bench_mnist", "task": "image_classification", "family": "vision", "num_classes": 10,
              "image": {"channels": 1, "height": 28, "width": 28, "mean": [0.1307], "std": [0.3081]}}


def _train_steps(method: str, threads: int, steps: int, warmup: int, queue, patch: int = 7,
                 bf16: bool = False, placement: str | None = None) -> None:
    torch.set_num_threads(threads)
    model_cfg, train_cfg = C.family_cfg("vision")
    model_cfg["patch_size"] = patch
    torch.manual_seed(0)
    opts = C.norm_options()
    if placement:
        opts["placement"] = placement
    model = build_model(MNIST_META, method, model_cfg, opts)
    model.train()
    opt = make_optimizer(model, train_cfg)
    task = Task(MNIST_META, train_cfg, torch.device("cpu"))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(train_cfg["batch_size"], 1, 28, 28, generator=g)
    y = nn.functional.one_hot(torch.randint(0, 10, (x.shape[0],), generator=g), 10).float()

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(x)
        loss = task.loss(out, y, 0.1)  # as the trainer (run/train.py forward_loss)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    queue.put((start, time.perf_counter()))


def measure(procs: int, threads: int, method: str, steps: int, warmup: int, patch: int = 7,
            bf16: bool = False, placement: str | None = None) -> float:
    """Training steps per second of `procs` processes of `threads` threads each, run at once."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    ps = [ctx.Process(target=_train_steps, args=(method, threads, steps, warmup, q, patch, bf16, placement))
          for _ in range(procs)]
    for p in ps:
        p.start()
    spans = [q.get() for _ in ps]
    for p in ps:
        p.join()
    wall = max(e for _, e in spans) - min(s for s, _ in spans)
    return procs * steps / wall


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--method", default="frozen_ln")
    p.add_argument("--steps", type=int, default=30, help="timed training steps per process")
    p.add_argument("--patch", type=int, default=7, help="patch size (28x28 images: 7 -> 16 tokens, 4 -> 49)")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast, as runtime.bf16 trains on a CPU")
    p.add_argument("--placement", choices=["per_block", "per_sublayer"], help="selector placement (gated methods)")
    args = p.parse_args(argv)
    cores = len(__import__("os").sched_getaffinity(0))
    warmup = args.warmup or 3
    print("# One-thread jobs side by side against one multi-thread job (benchmarks/threads.py)")
    print(f"machine: {C.machine_line()}; {cores} cores; {args.method}"
          f"{' (' + args.placement + ')' if args.placement else ''}, ViT-Lite 8x128, 28x28x1, patch {args.patch}, "
          f"{'bf16 autocast' if args.bf16 else 'fp32'}, batch 128; "
          f"{args.steps} timed steps per process after {warmup} warm-up")
    kw = dict(patch=args.patch, bf16=args.bf16, placement=args.placement)
    side = measure(cores, 1, args.method, args.steps, warmup, **kw)
    one = measure(1, cores, args.method, args.steps, warmup, **kw)
    print(f"\n{cores} processes x 1 thread: {side:.2f} steps/s in all")
    print(f"1 process x {cores} threads:  {one:.2f} steps/s")
    faster = f"{cores} one-thread jobs" if side >= one else f"one {cores}-thread job"
    print(f"ratio (side by side / one multi-thread job): **{side / one:.2f}x**: {faster} finish more steps per second")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
