"""Training-step time and FLOPs of every method relative to frozen_ln, per backbone, at paper size.

    python benchmarks/step_time.py            # all backbones, ~5 minutes on 2 cores
    python benchmarks/step_time.py --quick    # fewer repeats
    python benchmarks/step_time.py --backbones vision --profile   # + torch.profiler top ops
    python benchmarks/step_time.py --device cuda --backbones vision --methods frozen_ln autonorm_s --repeats 50
                                              # on a GPU: wall time with a sync after each step

One step = what the trainer's inner loop does: set the lr, forward, the task's loss, the
finite-loss check, zero_grad, backward, grad-norm clipping, AdamW step. Every variant has its
own model and optimizer built with the same seed; steps are timed interleaved (order rotating),
after warm-up, and the median is reported.

Extra rows besides the config's methods:
  autonorm_s [frozen]           selectors frozen (the state after T_freeze when the freeze fires)
  autonorm_s [straightforward]  kernels.fast_paths(False): the plain autograd formulas of docs/method.md section 1
  dyt [straightforward]         the same for static DyT
On ``--device cuda`` every step ends with ``torch.cuda.synchronize`` and the ratios are wall-time
ratios (a GPU step's process CPU time is the launch overhead, not the step); ``--json PATH`` writes
the ratios for scripts (benchmarks/gpu_check.sh).
FLOPs come from torch.utils.flop_counter (matmuls and convolutions only: elementwise work, and so
most of a norm's cost, counts as zero). "selector share" is the selectors' part of those FLOPs.
"""

from __future__ import annotations

import contextlib
import json
import sys

import _common as C
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from autonorm.layers import kernels, norms
from autonorm.run.cost import count_params
from autonorm.methods import METHODS
from autonorm.models import build_model
from autonorm.run.optim import make_optimizer
from autonorm.run.tasks import Task

TARGET = 1.04  # the issue "Speed" (an earlier issue asked for 1.10)
EXTRA = ["autonorm_s [frozen]", "autonorm_s [straightforward]", "dyt [straightforward]"]


def build_variant(backbone: str, variant: str, seed: int = 0, device: torch.device = torch.device("cpu")):
    meta, family, bs, _ = C.BACKBONES[backbone]
    model_cfg, train_cfg = C.family_cfg(family)
    method = variant.split(" ")[0]
    torch.manual_seed(seed)
    model = build_model(meta, method, model_cfg, C.norm_options()).to(device)
    if variant.endswith("[frozen]"):
        norms.freeze_selectors(model)
    model.train()
    fast = not variant.endswith("[straightforward]")
    return model, make_optimizer(model, train_cfg), train_cfg, fast


def make_step(backbone: str, model: nn.Module, opt, train_cfg: dict, fast: bool,
              device: torch.device = torch.device("cpu")):
    meta, _, bs, _ = C.BACKBONES[backbone]
    task = Task(meta, train_cfg, device)
    x, y = (t.to(device) for t in C.example_batch(backbone, bs))
    smoothing = float(train_cfg.get("label_smoothing", 0.0))
    if task.kind == "image_classification":  # soft targets, as after MixUp/CutMix in the trainer
        k = meta["num_classes"]
        y = nn.functional.one_hot(y, k).float() * (1 - smoothing) + smoothing / k
    clip, lr = train_cfg.get("grad_clip"), train_cfg["lr"]

    def step():
        with kernels.fast_paths(fast):
            for group in opt.param_groups:
                group["lr"] = lr
            out = model(x)
            loss = task.loss(out, y, smoothing)
            if not torch.isfinite(loss):
                raise RuntimeError("loss is not finite")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if clip:
                nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()

    return step, x, y, task, smoothing


def flops(model: nn.Module, x: torch.Tensor, y, task, smoothing) -> tuple[float, float, float]:
    """(forward FLOPs per sample in eval, train fwd+bwd FLOPs per sample, selector share of forward)."""
    was = model.training
    model.eval()
    fc = FlopCounterMode(display=False)
    with torch.no_grad(), fc:
        model(x[:1])
    fwd = fc.get_total_flops()
    sel = sum(sum(v.values()) for k, v in fc.get_flop_counts().items() if k.endswith(".selector"))
    model.train(was)
    fc2 = FlopCounterMode(display=False)
    with fc2:
        task.loss(model(x), y, smoothing).backward()
    model.zero_grad(set_to_none=True)
    return fwd, fc2.get_total_flops() / x.shape[0], sel / fwd if fwd else 0.0


def profile_top(step, label: str, rows: int = 15) -> None:
    from torch.profiler import ProfilerActivity, profile

    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            step()
    print(f"\n#### torch.profiler, 3 steps of {label}, top ops by self CPU time\n```")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows))
    print("```")


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--backbones", nargs="+", default=list(C.BACKBONES), choices=list(C.BACKBONES))
    p.add_argument("--methods", nargs="+", help="methods (default: config.yaml methods) plus the extra rows")
    p.add_argument("--no-extra", action="store_true", help="skip the [frozen]/[straightforward] rows")
    p.add_argument("--profile", action="store_true", help="also print torch.profiler tables (frozen_ln, autonorm_s)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                   help="where the steps run (cuda: wall time, synchronised after each step)")
    p.add_argument("--json", metavar="PATH", help="also write the ratios as JSON")
    args = p.parse_args(argv)
    gpu = args.device == "cuda"
    if gpu and not torch.cuda.is_available():
        print("benchmarks/step_time.py --device cuda needs a CUDA GPU: torch.cuda.is_available() is False on this "
              f"machine (torch {torch.__version__}). Nothing was measured.", file=sys.stderr)
        return 2
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if gpu else None
    repeats = args.repeats or ((20 if args.quick else 50) if gpu else (3 if args.quick else 5))
    warmup = args.warmup or (5 if gpu else 1)
    C.setup_torch(args.threads, not args.no_malloc_tuning)
    methods = args.methods or [m for m in C.load_config()["methods"] if m in METHODS]
    if "frozen_ln" not in methods:
        methods = ["frozen_ln"] + methods
    variants = methods + ([] if args.no_extra else [v for v in EXTRA if v.split(" ")[0] in methods])

    print("# Training-step time and FLOPs relative to frozen_ln (benchmarks/step_time.py)")
    if gpu:
        print(f"machine: {C.machine_line()}; device {torch.cuda.get_device_name(dev)}; {repeats} timed steps after "
              f"{warmup} warm-up, interleaved, median; ratios in bold are WALL-time ratios (synchronised each step)")
    else:
        print(f"machine: {C.machine_line()}; {repeats} timed repeats after {warmup} warm-up, interleaved, median; "
              f"ratios in bold are process-CPU-time ratios (robust to other load; with 1 thread = wall on an idle box)")
    summary = {}
    for backbone in args.backbones:
        desc = C.BACKBONES[backbone][3]
        steps, info = {}, {}
        for v in variants:
            model, opt, train_cfg, fast = build_variant(backbone, v, device=dev)
            step, x, y, task, sm = make_step(backbone, model, opt, train_cfg, fast, dev)
            steps[v] = step
            with kernels.fast_paths(fast):
                info[v] = (count_params(model),) + flops(model, x, y, task, sm)
        times = C.interleaved(steps, repeats, warmup, sync)
        # the judged times: process CPU time on a CPU; on a GPU the wall time (synchronised each step)
        judged, kind = (times, "wall") if gpu else (times.cpu, "CPU")
        base_w, base_c = C.med(times["frozen_ln"]), C.med(judged["frozen_ln"])
        base_fwd, base_train = info["frozen_ln"][1], info["frozen_ln"][2]
        rows = []
        for v in variants:
            w, c = C.med(times[v]), C.med(judged[v])
            params, fwd, train, share = info[v]
            best = min(judged[v]) / min(judged["frozen_ln"])
            rows.append([v, f"{w * 1000:.0f}" if not gpu else f"{w * 1000:.2f}", f"{w / base_w:.3f}"]
                        + ([] if gpu else [f"{c * 1000:.0f}"])
                        + [f"**{c / base_c:.3f}**", f"{best:.3f}", C.spread(judged[v]), f"{params:,}", f"{fwd / 1e6:.1f}",
                           f"{fwd / base_fwd:.4f}", f"{train / base_train:.4f}", f"{100 * share:.3f}%" if share else "-"])
            summary[(backbone, v)] = (w / base_w, c / base_c, best)
        print(f"\n### {backbone}: {desc}{' (on ' + args.device + ')' if gpu else ''}\n")
        print(C.table(rows, ["variant", "wall ms", "wall / frozen_ln"] + ([] if gpu else ["CPU ms"])
                      + [f"{kind} / frozen_ln", f"best {kind} / best frozen_ln", f"{kind} noise",
                         "params", "fwd MFLOP/sample", "fwd FLOPs / frozen_ln", "train FLOPs / frozen_ln",
                         "selector share"]))
        if args.profile:
            for v in ("frozen_ln", "autonorm_s"):
                if v in steps:
                    profile_top(steps[v], f"{backbone} {v}")
    if gpu and ("vision", "autonorm_s") in summary:
        w, _, b = summary[("vision", "autonorm_s")]
        print(f"\nOn {torch.cuda.get_device_name(dev)}: autonorm_s / frozen_ln training step, vision backbone, median "
              f"wall {w:.3f}x, best-of {b:.3f}x (the paper: < 0.1% per-epoch overhead, i.e. <= 1.001x)")
    elif ("vision", "autonorm_s") in summary:
        w, c, b = summary[("vision", "autonorm_s")]
        print(f"\nTarget (issue \"Speed\": autonorm_s <= {TARGET:.2f}x frozen_ln, vision backbone, CPU): median CPU "
              f"time {c:.3f}x, best-of CPU time {b:.3f}x, median wall {w:.3f}x -> "
              f"{'MET' if c <= TARGET else 'NOT MET'} (judged on the median CPU-time ratio)")
        if ("vision", "autonorm_s [straightforward]") in summary:
            w, c, b = summary[("vision", "autonorm_s [straightforward]")]
            print(f"The straightforward autograd form of the same math: median CPU time {c:.3f}x, best-of {b:.3f}x, "
                  f"wall {w:.3f}x")
    if args.json:
        out = {"device": args.device, "device_name": torch.cuda.get_device_name(dev) if gpu else C.machine_line(),
               "judged_on": "wall" if gpu else "process CPU time", "repeats": repeats, "warmup": warmup,
               "ratios": {f"{bb}/{v}": {"median": r[1], "best": r[2], "wall": r[0]} for (bb, v), r in summary.items()}}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(main())
