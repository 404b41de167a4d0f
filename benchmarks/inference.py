"""Inference: a frozen AutoNorm-S at evaluation against frozen_ln, per backbone, at paper size.

    python benchmarks/inference.py            # ~1-2 minutes on 2 cores
    python benchmarks/inference.py --quick
    python benchmarks/inference.py --eval-batch   # the config's eval_batch_size instead of the train batch

An eval forward under torch.no_grad() (what autonorm.cost.latency_ms_per_batch and the evaluator do),
on the backbone's batch; interleaved, warm, median. At evaluation a selector uses
softmax(logits / tau) with no noise, so a frozen AutoNorm-S costs what an unfrozen one does.
"""

from __future__ import annotations

import _common as C
import torch
from torch.utils.flop_counter import FlopCounterMode

from autonorm import norms
from autonorm.models import build_model

VARIANTS = ["frozen_ln", "dyt", "autonorm_s [frozen]", "autonorm_s [frozen, straightforward]"]


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--backbones", nargs="+", default=list(C.BACKBONES), choices=list(C.BACKBONES))
    p.add_argument("--eval-batch", action="store_true", help="use config.yaml eval_batch_size")
    args = p.parse_args(argv)
    repeats = args.repeats or (5 if args.quick else 11)
    warmup = args.warmup or (1 if args.quick else 2)
    C.setup_torch(args.threads)
    print("# Inference (eval forward, no_grad) relative to frozen_ln (benchmarks/inference.py)")
    print(f"machine: {C.machine_line()}; {repeats} timed repeats after {warmup} warm-up, interleaved, median; "
          f"ratios in bold are process-CPU-time ratios")
    for backbone in args.backbones:
        meta, family, bs, desc = C.BACKBONES[backbone]
        model_cfg, train_cfg = C.family_cfg(family)
        if args.eval_batch:
            bs = int(train_cfg.get("eval_batch_size", bs))
        x, _ = C.example_batch(backbone, bs)
        fns, info = {}, {}
        for v in VARIANTS:
            torch.manual_seed(0)
            model = build_model(meta, v.split(" ")[0], model_cfg, C.norm_options())
            if "frozen]" in v or "frozen," in v:
                norms.freeze_selectors(model)
            model.eval()
            fast = "straightforward" not in v

            def fwd(model=model, fast=fast):
                with torch.no_grad(), norms.fast_paths(fast):
                    model(x)

            fns[v] = fwd
            fc = FlopCounterMode(display=False)
            with torch.no_grad(), fc:
                model(x[:1])
            info[v] = fc.get_total_flops()
        times = C.interleaved(fns, repeats, warmup)
        bw, bc = C.med(times["frozen_ln"]), C.med(times.cpu["frozen_ln"])
        rows = []
        for v in VARIANTS:
            w, c = C.med(times[v]), C.med(times.cpu[v])
            rows.append([v, f"{w * 1000:.1f}", f"{w / bw:.3f}", f"{c * 1000:.1f}", f"**{c / bc:.3f}**",
                         C.spread(times.cpu[v]), f"{1000 * c / bs:.3f}", f"{info[v] / info['frozen_ln']:.4f}"])
        print(f"\n### {backbone}: {desc.rsplit(',', 1)[0]}, eval batch {bs}\n")
        print(C.table(rows, ["variant", "wall ms/batch", "wall / frozen_ln", "CPU ms/batch", "CPU / frozen_ln",
                             "CPU noise", "CPU ms/sample", "FLOPs / frozen_ln"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
