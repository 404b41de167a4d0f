"""Helpers of benchmarks/gpu_check.sh: the CUDA probe, and each stage's key number for the summary.

    python benchmarks/_gpu_check.py probe              # exit 3 (and why, on stderr) where CUDA is absent
    python benchmarks/_gpu_check.py key STAGE DIR      # one short line: the stage's key number

``probe`` prints the GPU count on its first line and one line describing the machine on the second.
``key`` reads only what the stage wrote into DIR (no torch import): the pytest summary line
(tests), the report and the runs' devices and GPU slots (smoke), step.json (step), epoch.json (epoch).
A missing or unreadable output gives a line that says so, never an error.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

STAGES = ("tests", "smoke", "step", "epoch")
NO_CUDA = 3


def probe() -> int:
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means: no usable torch here
        print(f"cannot import torch with {sys.executable} ({type(e).__name__}: {e})", file=sys.stderr)
        return NO_CUDA
    if not torch.cuda.is_available():
        import os

        build = (f"built for CUDA {torch.version.cuda}" if torch.version.cuda
                 else "a CPU-only build: install the default wheel, README 'Full reproduction on a GPU box'")
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        print(f"no CUDA GPU here: torch.cuda.is_available() is False (torch {torch.__version__}, {build}"
              + (f"; CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else "") + ")", file=sys.stderr)
        return NO_CUDA
    n = torch.cuda.device_count()
    names = [torch.cuda.get_device_name(i) for i in range(n)]
    mem = torch.cuda.get_device_properties(0).total_memory / 2**30
    print(n)
    print(f"{n} x {names[0]}{' (mixed: ' + ', '.join(names) + ')' if len(set(names)) > 1 else ''}, "
          f"{mem:.0f} GiB; torch {torch.__version__}, CUDA {torch.version.cuda}")
    return 0


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def key_tests(d: Path) -> str:
    """pytest's closing line, e.g. '6 passed in 41.20s' or '1 failed, 5 passed in 50.02s'."""
    try:
        lines = (d / "output.txt").read_text(errors="replace").splitlines()
    except OSError:
        return "no pytest output"
    for line in reversed(lines):
        if re.search(r"\d+ (passed|failed|skipped|errors?|deselected)\b", line) and " in " in line:
            return line.strip(" =")
    return "no pytest summary line (see output.txt)"


SLOT_LINE = re.compile(r"autonorm: GPU (\d+), slot (\d+) of (\d+)")


def key_smoke(d: Path) -> str:
    """The report's path, how many runs finished and on which device, and the GPU slots they took."""
    report = d / "report.md"
    parts = [f"report {report}" if report.exists() else "no report.md"]
    statuses = sorted((d / "runs").glob("*/*/seed*/status.json"))
    ok = sum(1 for p in statuses if (_read_json(p) or {}).get("status") == "ok")
    envs = [(_read_json(p) or {}).get("device") or "" for p in sorted((d / "runs").glob("*/*/seed*/env.json"))]
    if envs:
        parts.append(f"{ok}/{len(envs)} runs ok, {sum(e.startswith('cuda') for e in envs)} on cuda")
    slots, per_gpu = set(), None
    for log in (d / "logs").rglob("*.log"):  # train and evaluate jobs say which slot they took
        if log.name.endswith(".attempts.log"):
            continue
        for m in SLOT_LINE.finditer(log.read_text(errors="replace")):
            slots.add((int(m.group(1)), int(m.group(2))))
            per_gpu = int(m.group(3))
    if slots:
        parts.append(f"{len(slots)} GPU slot(s) used ({per_gpu} runs per GPU)")
    return "; ".join(parts)


def key_step(d: Path) -> str:
    """autonorm_s / frozen_ln training step (median wall ratio on the GPU), and the other rows."""
    got = _read_json(d / "step.json")
    if not got or "vision/autonorm_s" not in got.get("ratios", {}):
        return "no step.json with the vision autonorm_s ratio"
    r = got["ratios"]
    head = (f"autonorm_s / frozen_ln step {r['vision/autonorm_s']['median']:.3f}x "
            f"(median {got.get('judged_on', 'wall')}, best-of {r['vision/autonorm_s']['best']:.3f}x)")
    others = [f"{k.split('/', 1)[1]} {v['median']:.3f}x" for k, v in r.items()
              if k.startswith("vision/") and k not in ("vision/autonorm_s", "vision/frozen_ln")]
    return head + (f"; {', '.join(others)}" if others else "")


def key_epoch(d: Path) -> str:
    """The first method's epoch seconds in the four variants, the others' fp32 ratio, runs per GPU."""
    got = _read_json(d / "epoch.json")
    variants = (got or {}).get("variants") or []
    if not variants:
        return "no epoch.json"
    label = lambda v: ("bf16" if v["bf16"] else "fp32") + ("+compile" if v["compile"] else "")  # noqa: E731
    first = variants[0]["method"]
    cells = [f"{label(v)} " + (f"{v['epoch_s']:.1f}" if "epoch_s" in v else f"failed ({v.get('error', '?')[:40]})")
             for v in variants if v["method"] == first]
    out = f"{first} epoch s: {', '.join(cells)}"
    base = next((v["epoch_s"] for v in variants if v["method"] == first and not v["bf16"] and not v["compile"]
                 and "epoch_s" in v), None)
    for v in variants:
        if v["method"] != first and not v["bf16"] and not v["compile"] and "epoch_s" in v and base:
            out += f"; {v['method']} fp32 {v['epoch_s'] / base:.2f}x"
    fits = [v["runs_per_gpu"] for v in variants if "runs_per_gpu" in v]
    if fits:
        out += f"; <= {min(fits)} runs per GPU (memory bound)"
    return out


KEYS = {"tests": key_tests, "smoke": key_smoke, "step": key_step, "epoch": key_epoch}


def main(argv: list[str]) -> int:
    if argv[:1] == ["probe"] and len(argv) == 1:
        return probe()
    if argv[:1] == ["key"] and len(argv) == 3 and argv[1] in KEYS:
        key_of = KEYS[argv[1]]
        print(key_of(Path(argv[2])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
