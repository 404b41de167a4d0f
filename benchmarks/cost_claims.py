"""The paper's two cost claims on a dedicated, interleaved benchmark, recorded for the findings page.

    python benchmarks/cost_claims.py                                  # print the table
    python benchmarks/cost_claims.py --record benchmarks/records/cost_claims.json   # and record it

1. "The gating MLP adds less than 0.1% per-epoch overhead relative to a standard Transformer" (§4.6):
   a training step (forward, loss, backward, clipping, AdamW) of AutoNorm-S against frozen_ln, with
   its selectors learning (the epochs before T_freeze, and every NLP epoch) and frozen (after it).
2. "During inference, the selector can be optionally frozen, making the overhead negligible" (§3.5):
   an eval forward of frozen_ln against AutoNorm-S as trained (selectors frozen) and exported as the
   paper describes (autonorm.run.export): every gate replaced by constants (its weights 0.5 / 0.5:
   both norms still computed, no selector), and every gate one-hot and pruned (LayerNorm alone).

The paper's backbones at their sizes, one selector per block (the paper's placement), randomly
initialised (a norm's cost does not depend on its weights). Each round times every variant once,
in rotating order, after warm-up; the ratio of a round is its AutoNorm-S process CPU time over its
frozen_ln time (one thread: robust to other load), so the record holds one ratio per round and the
findings page gives their mean with a 90% t-interval (report.findings.cost_rows). A training job's
wall time on shared cores is not this: those rows only support.
"""

from __future__ import annotations

import json
import os
import time

import _common as C
import torch
from step_time import make_step

from autonorm.layers import norms
from autonorm.models import build_model
from autonorm.run import export
from autonorm.run.optim import make_optimizer

#: the backbones timed, with the paper's batch: vision at MNIST's shape and the paper's patch 4
MNIST_META = {"name": "bench_mnist", "task": "image_classification", "family": "vision", "num_classes": 10,
              "image": {"channels": 1, "height": 28, "width": 28, "mean": [0.1307], "std": [0.3081]}}
TRAIN_VARIANTS = ("frozen_ln", "autonorm_s", "autonorm_s [frozen]")
INFER_VARIANTS = ("frozen_ln", "autonorm_s [frozen]", "autonorm_s [constant gates]", "autonorm_s [pruned to LN]")


def _meta(backbone: str) -> dict:
    return MNIST_META if backbone == "vision" else C.BACKBONES[backbone][0]


def _batch(backbone: str):
    bs = C.BACKBONES[backbone][2]
    if backbone != "vision":
        return C.example_batch(backbone, bs)
    g = torch.Generator().manual_seed(0)
    return torch.randn(bs, 1, 28, 28, generator=g), torch.randint(0, 10, (bs,), generator=g)


def build(backbone: str, variant: str, training: bool):
    meta, family = _meta(backbone), C.BACKBONES[backbone][1]
    model_cfg, train_cfg = C.family_cfg(family)
    opts = C.norm_options()
    method = variant.split(" ")[0]
    if method != "frozen_ln":
        opts["placement"] = "per_block"
    torch.manual_seed(0)
    model = build_model(meta, method, model_cfg, opts)
    if "[frozen]" in variant or "[constant" in variant or "[pruned" in variant:
        norms.freeze_selectors(model)
    gates = {m.selector_name: m.choice_names for m in model.modules()
             if isinstance(m, norms.GatedNorm) and getattr(m, "own_gate", False)}
    if "[constant gates]" in variant:
        export.apply_plan(model, {}, {g: {c: 1.0 / len(cs) for c in cs} for g, cs in gates.items()})
    if "[pruned to LN]" in variant:
        export.apply_plan(model, {g: "ln" for g in gates})
    model.train(training)
    return model, train_cfg


def train_step(backbone: str, variant: str):
    model, train_cfg = build(backbone, variant, training=True)
    opt = make_optimizer(model, train_cfg)
    if backbone == "vision":  # step_time's step on the MNIST shape
        x, y = _batch(backbone)
        from autonorm.run.tasks import Task
        from autonorm.run.train import backward_step, forward_loss

        task = Task(MNIST_META, train_cfg, torch.device("cpu"))
        y = torch.nn.functional.one_hot(y, 10).float() * 0.9 + 0.01

        def step():
            backward_step(model, opt, forward_loss(model, task, x, y, 0.1, False), train_cfg.get("grad_clip"))
        return step
    return make_step(backbone, model, opt, train_cfg, True)[0]


def infer_step(backbone: str, variant: str):
    model, _ = build(backbone, variant, training=False)
    x, _ = _batch(backbone)

    def fwd():
        with torch.no_grad():
            model(x)
    return fwd


def ratios(times, names, base="frozen_ln") -> dict[str, list[float]]:
    """Per variant, the ratio of each round's CPU time to the base's CPU time in the same round."""
    return {v: [a / b for a, b in zip(times.cpu[v], times.cpu[base])] for v in names if v != base}


def main(argv=None) -> int:
    p = C.base_parser(__doc__.splitlines()[0])
    p.add_argument("--backbones", nargs="+", default=["vision", "text", "tabular"], choices=["vision", "text", "tabular"])
    p.add_argument("--record", help="write the per-round ratios here (JSON), for the findings page")
    args = p.parse_args(argv)
    repeats, warmup = args.repeats or (5 if args.quick else 15), args.warmup or 2
    C.setup_torch(args.threads, not args.no_malloc_tuning)
    out = {"benchmark": "benchmarks/cost_claims.py", "machine": C.machine_line(), "cpu": _cpu(),
           "cores": len(os.sched_getaffinity(0)), "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "repeats": repeats, "warmup": warmup, "placement": "per_block", "backbones": {}}
    print("# The paper's cost claims on an interleaved benchmark (benchmarks/cost_claims.py)")
    print(f"machine: {out['machine']}; {out['cpu']}; {repeats} rounds after {warmup} warm-up, median process CPU time")
    for backbone in args.backbones:
        desc = C.BACKBONES[backbone][3] if backbone != "vision" else "ViT-Lite 8x128, 28x28x1, patch 4, batch 128"
        tr = C.interleaved({v: train_step(backbone, v) for v in TRAIN_VARIANTS}, repeats, warmup)
        inf = C.interleaved({v: infer_step(backbone, v) for v in INFER_VARIANTS}, repeats, warmup)
        rec = {"description": desc, "train": ratios(tr, TRAIN_VARIANTS), "inference": ratios(inf, INFER_VARIANTS),
               "train_ms": {v: 1000 * C.med(tr.cpu[v]) for v in TRAIN_VARIANTS},
               "inference_ms": {v: 1000 * C.med(inf.cpu[v]) for v in INFER_VARIANTS}}
        out["backbones"][backbone] = rec
        rows = [[f"train: {v}", f"{rec['train_ms'][v]:.1f}", _ratio_text(rec["train"].get(v))] for v in TRAIN_VARIANTS]
        rows += [[f"inference: {v}", f"{rec['inference_ms'][v]:.2f}", _ratio_text(rec["inference"].get(v))]
                 for v in INFER_VARIANTS]
        print(f"\n### {backbone}: {desc}\n")
        print(C.table(rows, ["variant", "CPU ms (median)", "/ frozen_ln, mean of rounds [90% CI]"]))
    out["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if args.record:
        os.makedirs(os.path.dirname(os.path.abspath(args.record)), exist_ok=True)
        tmp = args.record + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, args.record)
        print(f"\nrecorded: {args.record}")
    return 0


def _ratio_text(rs) -> str:
    if not rs:
        return "1 (the base)"
    from autonorm.analysis import stats

    mean = sum(rs) / len(rs)
    sd = (sum((r - mean) ** 2 for r in rs) / (len(rs) - 1)) ** 0.5 if len(rs) > 1 else float("nan")
    lo, hi = stats.t_ci(mean, sd, len(rs), 0.90)
    return f"{mean:.4f} [{lo:.4f}, {hi:.4f}]"


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    raise SystemExit(main())
