"""``autonorm-data``: the Snakemake entry point of the data layer.

Subcommands (formats in docs/data.md):
  download    --dataset D --raw-dir R [--from DIR] [--allow-unverified] [--options-json '{...}']
  preprocess  --dataset D --raw-dir R --out <results>/data/D [--options-json '{...}'] [--allow-unverified]
  corruptions --source <results>/data/cifar10 --raw-dir R --out <results>/data/cifar10c [--seed S]
              [--max-images N] [--no-download] [--generate] [--workers K]

Exit status 0 on success; 2 with a one-paragraph explanation on stderr when
raw data is missing or fails verification (``DataError``); any other problem
ends as every ``autonorm-*`` command's does (``autonorm.cli.guarded``: one
paragraph and the exit code of its kind, README "Exit codes"; ``--debug``
shows the traceback).
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
    d.add_argument("--options-json", default=None,
                   help="dataset options, i.e. the config's data block (ptb_source, allow_unverified...)")
    d.add_argument("--from", dest="from_dir", default=None, metavar="DIR",
                   help="copy the raw files from this local folder (any sub-layout: a mirror, "
                        "/usr/share/datasets/fashion-mnist, a colleague's copy) instead of downloading")
    d.add_argument("--allow-unverified", action="store_true",
                   help="accept files whose content does not match the published checksums "
                        "(recorded as unverified in meta.json and the report)")
    pp = sub.add_parser("preprocess", help="raw -> <out>/{meta.json,train.pt,val.pt,test.pt[,test_rot90.pt]}")
    pp.add_argument("--dataset", required=True)
    pp.add_argument("--raw-dir", required=True)
    pp.add_argument("--out", required=True)
    pp.add_argument("--options-json", default=None)
    pp.add_argument("--allow-unverified", action="store_true",
                    help="same as the data option allow_unverified: true")
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
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"--options-json is not valid JSON: {exc}")
    if not isinstance(obj, dict):
        raise SystemExit("--options-json must be a JSON object")
    return obj


def main(argv: Optional[List[str]] = None) -> int:
    """The command line (``autonorm-data``): errors end in one paragraph and an exit code
    (autonorm.cli; ``--debug`` shows the traceback)."""
    from ..cli import guarded

    return guarded("autonorm-data", _main, argv)


def _main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    from . import pipeline
    try:
        if args.cmd == "download":
            marker = pipeline.download(args.dataset, args.raw_dir, _options(args.options_json),
                                       from_dir=args.from_dir, allow_unverified=args.allow_unverified)
            print(f"[autonorm-data] {args.dataset}: raw data ready ({marker})")
        elif args.cmd == "preprocess":
            opts = _options(args.options_json)
            if args.allow_unverified:
                opts["allow_unverified"] = True
            meta = pipeline.preprocess(args.dataset, args.raw_dir, args.out, opts)
            prov = meta.get("provenance", {})
            print(f"[autonorm-data] {args.dataset}: wrote {args.out} sizes={meta['sizes']} "
                  f"standin={meta['standin']} provenance={prov.get('status')} in {meta['preprocess_seconds']}s")
            if prov.get("status") == "unverified":
                print(f"[autonorm-data] WARNING: {args.dataset}: {prov.get('note')}", file=sys.stderr)
        elif args.cmd == "corruptions":
            meta = pipeline.corruptions(args.source, args.raw_dir, args.out, seed=args.seed,
                                        max_images=args.max_images, allow_download=not args.no_download,
                                        force_generate=args.generate, workers=args.workers)
            print(f"[autonorm-data] wrote {args.out} generated={meta['generated']} n_per_severity={meta['n_per_severity']}")
    except DataError as exc:  # raw data missing or failing verification: exit code 2 (README "Exit codes")
        print(f"[autonorm-data] ERROR: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:  # an unknown dataset
        print(f"[autonorm-data] ERROR: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
