"""One norm layer alone: LayerNorm, DyT and AutoNorm at each backbone's activation shape.

    python benchmarks/norm_layer.py            # ~1 minute on 2 cores
    python benchmarks/norm_layer.py --quick

Where a model-level ratio (step_time.py, inference.py) comes from: the time of one norm layer,
training (forward + backward, gradients for the input and every parameter) and evaluation
(no_grad forward; AutoNorm's selector frozen, which at evaluation costs what an unfrozen one
does), at the shape the paper-size backbone feeds its norms, times the number of norms in the
model. The last column is what that layer alone adds to one model step or eval batch over
LayerNorm, as a fraction of the frozen_ln model's time (measured here too), i.e. the share of the
model-level ratio above 1 that the norm layers explain.
"""

from __future__ import annotations

import _common as C
import torch
from torch import nn

from autonorm.layers import norms
from autonorm.models import build_model

VARIANTS = ["ln", "dyt", "autonorm"]


def activation_shape(backbone: str) -> tuple[tuple[int, ...], int, nn.Module, torch.Tensor]:
    """(shape a norm sees, norms per model, the frozen_ln model, its input batch)."""
    meta, family, bs, _ = C.BACKBONES[backbone]
    model_cfg, _ = C.family_cfg(family)
    torch.manual_seed(0)
    model = build_model(meta, "frozen_ln", model_cfg, C.norm_options())
    x, _ = C.example_batch(backbone, bs)
    shapes = []
    hooks = [m.register_forward_pre_hook(lambda m, a: shapes.append(tuple(a[0].shape)))
             for m in model.modules() if isinstance(m, nn.LayerNorm)]
    with torch.no_grad():
        model.eval()(x)
    for h in hooks:
        h.remove()
    return shapes[0], len(shapes), model, x


INNER = 10  # calls per timed sample: the layer's input is warm in cache, as in a model just after it was made


def layer_fns(name: str, shape: tuple[int, ...], train: bool):
    torch.manual_seed(0)
    layer = norms.build_norm(name, shape[-1], **C.norm_options())
    x0 = torch.randn(shape)
    if not train:
        if isinstance(layer, norms.GatedNorm):
            norms.freeze_selectors(layer)
        layer.eval()

        def fwd():
            with torch.no_grad():
                for _ in range(INNER):
                    layer(x0)
        return fwd
    layer.train()
    gy = torch.randn(shape)

    def step():
        for _ in range(INNER):
            x = x0.clone().requires_grad_(True)
            layer(x).backward(gy)
            layer.zero_grad(set_to_none=True)
    return step


def model_fn(model: nn.Module, x: torch.Tensor, train: bool):
    if not train:
        def fwd():
            with torch.no_grad():
                model.eval()(x)
        return fwd

    def step():
        model.train()(x).float().sum().backward()
        model.zero_grad(set_to_none=True)
    return step


def main(argv=None) -> int:
    args = C.base_parser(__doc__.splitlines()[0]).parse_args(argv)
    repeats = args.repeats or (5 if args.quick else 9)
    warmup = args.warmup or 2
    C.setup_torch(args.threads, not args.no_malloc_tuning)
    print("# One norm layer: LayerNorm, DyT, AutoNorm (benchmarks/norm_layer.py)")
    print(f"machine: {C.machine_line()}; malloc tuning {'off' if args.no_malloc_tuning else 'on'}; "
          f"{repeats} timed repeats after {warmup} warm-up, interleaved, median CPU time\n")
    rows = []
    for backbone in C.BACKBONES:
        shape, n_norms, model, x = activation_shape(backbone)
        for train in (True, False):
            fns = {v: layer_fns(v, shape, train) for v in VARIANTS}
            fns["frozen_ln model"] = model_fn(model, x, train)
            times = C.interleaved(fns, repeats, warmup)
            ln, whole = C.med(times.cpu["ln"]) / INNER, C.med(times.cpu["frozen_ln model"])
            for v in VARIANTS:
                t = C.med(times.cpu[v]) / INNER
                rows.append([backbone, "fwd + bwd" if train else "eval fwd", "x".join(map(str, shape)), n_norms, v,
                             f"{t * 1000:.2f}", f"**{t / ln:.2f}**", C.spread(times.cpu[v]),
                             f"{n_norms * (t - ln) / whole:+.3f}" if v != "ln" else "-"])
    print(C.table(rows, ["backbone", "pass", "activation", "norms in model", "layer", "CPU ms per call", "layer / ln",
                         "CPU noise", "norms' extra / frozen_ln model"]))
    print("\n'norms' extra / frozen_ln model': (norms in model) x (layer - ln) / the frozen_ln model's time for the "
          "same pass (model step here: forward + backward of a summed output, no optimizer).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
