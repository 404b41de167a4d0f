"""Training step in bf16 autocast against fp32 on the CPU (`runtime.bf16`), per method, at paper size.

    python benchmarks/cpu_bf16.py                       # vision (ViT-Lite 8x128), frozen_ln and autonorm_s
    python benchmarks/cpu_bf16.py --backbones vision text --methods frozen_ln autonorm_s adanorm

The trainer honours `runtime.bf16` on a CPU only where it has native bf16 (`avx512_bf16` or
`amx_bf16` in /proc/cpuinfo; autonorm.run.device.bf16_autocast); elsewhere this script says so
and stops, since emulated bf16 is slower than fp32. One step is step_time.py's (forward, loss,
backward, clipping, AdamW), the forward under `torch.autocast("cpu", dtype=torch.bfloat16)` for
the bf16 rows. Steps are timed interleaved, after warm-up; the ratio is fp32 time / bf16 time of
the median process CPU time (robust to other load with 1 thread).
"""

from __future__ import annotations

import sys

import _common as C
import torch
from step_time import build_variant, make_step

from autonorm.run.device import NATIVE_BF16_FLAGS, cpu_has_native_bf16


def autocast_step(step):
    def run():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            step()
    return run


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--backbones", nargs="+", default=["vision"], choices=list(C.BACKBONES))
    p.add_argument("--methods", nargs="+", default=["frozen_ln", "autonorm_s"])
    args = p.parse_args(argv)
    if not cpu_has_native_bf16():
        print(f"this CPU has no native bf16 (none of {', '.join(NATIVE_BF16_FLAGS)} in /proc/cpuinfo): "
              "the trainer refuses runtime.bf16 here, nothing to measure")
        return 0
    repeats, warmup = args.repeats or (5 if args.quick else 9), args.warmup or 2
    C.setup_torch(args.threads, not args.no_malloc_tuning)
    print("# Training step, bf16 autocast against fp32 on the CPU (benchmarks/cpu_bf16.py)")
    print(f"machine: {C.machine_line()}; {repeats} timed repeats after {warmup} warm-up, interleaved, "
          "median process CPU time")
    rows = []
    for backbone in args.backbones:
        steps = {}
        for m in args.methods:
            for precision in ("fp32", "bf16"):
                model, opt, train_cfg, fast = build_variant(backbone, m)
                step = make_step(backbone, model, opt, train_cfg, fast)[0]
                steps[(m, precision)] = step if precision == "fp32" else autocast_step(step)
        times = C.interleaved(steps, repeats, warmup)
        for m in args.methods:
            t32, t16 = C.med(times.cpu[(m, "fp32")]), C.med(times.cpu[(m, "bf16")])
            rows.append([C.BACKBONES[backbone][3], m, f"{1000 * t32:.0f}", f"{1000 * t16:.0f}",
                         f"**{t32 / t16:.2f}x**", C.spread(times.cpu[(m, "bf16")])])
    print(C.table(rows, ["backbone", "method", "fp32 ms/step", "bf16 ms/step", "fp32 / bf16", "bf16 spread"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
