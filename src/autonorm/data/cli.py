"""``autonorm-data``: the Snakemake entry point of the data layer.

Subcommands (see contracts.md):
  download    --dataset D --raw-dir R
  preprocess  --dataset D --raw-dir R --out <results>/data/D [--options-json '{...}']
  corruptions --source <results>/data/cifar10 --raw-dir R --out <results>/data/cifar10c [--seed S]
              [--max-images N] [--no-download] [--generate] [--workers K]

Exit status 0 on success; 2 with a one-paragraph explanation on stderr when
raw data is missing or corrupt (``DataError``); other failures are bugs and
keep their traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from .errors import DataError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="autonorm-data", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("download", help="fetch/verify raw files into R/<dataset>/ and write R/<dataset>/.complete")
    d.add_argument("--dataset", required=True)
    d.add_argument("--raw-dir", required=True)
    d.add_argument("--options-json", default=None, help="dataset options (e.g. ptb_source)")
    pp = sub.add_parser("preprocess", help="raw -> <out>/{meta.json,train.pt,val.pt,test.pt[,test_rot90.pt]}")
    pp.add_argument("--dataset", required=True)
    pp.add_argument("--raw-dir", required=True)
    pp.add_argument("--out", required=True)
    pp.add_argument("--options-json", default=None)
    c = sub.add_parser("corruptions", help="official CIFAR-10-C if available, else generated, in the official layout")
    c.add_argument("--source", required=True, help="processed dataset folder (cifar10 or smoke_shapes32)")
    c.add_argument("--raw-dir", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--max-images", type=int, default=None, help="generate on the first N test images only")
    c.add_argument("--no-download", action="store_true", help="do not try Zenodo")
    c.add_argument("--generate", action="store_true", help="generate even if the official release is available")
    c.add_argument("--workers", type=int, default=1, help="processes for generation (one corruption each)")
    return p


def _options(text: Optional[str]):
    if not text:
        return {}
    obj = json.loads(text)
    if not isinstance(obj, dict):
        raise SystemExit("--options-json must be a JSON object")
    return obj


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    from . import pipeline
    try:
        if args.cmd == "download":
            marker = pipeline.download(args.dataset, args.raw_dir, _options(args.options_json))
            print(f"[autonorm-data] {args.dataset}: raw data ready ({marker})")
        elif args.cmd == "preprocess":
            meta = pipeline.preprocess(args.dataset, args.raw_dir, args.out, _options(args.options_json))
            print(f"[autonorm-data] {args.dataset}: wrote {args.out} sizes={meta['sizes']} "
                  f"standin={meta['standin']} in {meta['preprocess_seconds']}s")
        elif args.cmd == "corruptions":
            meta = pipeline.corruptions(args.source, args.raw_dir, args.out, seed=args.seed,
                                        max_images=args.max_images, allow_download=not args.no_download,
                                        force_generate=args.generate, workers=args.workers)
            print(f"[autonorm-data] wrote {args.out} generated={meta['generated']} n_per_severity={meta['n_per_severity']}")
    except DataError as exc:
        print(f"[autonorm-data] ERROR: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"[autonorm-data] ERROR: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
