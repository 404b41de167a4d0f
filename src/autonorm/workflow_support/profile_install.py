"""``autonorm-install-profile``: put a shipped Snakemake profile where ``--profile NAME`` finds it.

Snakemake resolves ``--profile slurm`` as ``./slurm``, then
``<user config dir>/snakemake/slurm`` (``~/.config/snakemake/slurm`` on Linux,
``$XDG_CONFIG_HOME`` respected), then ``/etc/xdg/snakemake/slurm``; never as
``./profiles/slurm``. This command copies ``profiles/<NAME>/`` of the checkout
into the user config folder, so that, run from the repository root,

    autonorm-install-profile slurm
    snakemake all --profile slurm

works. The workflow profile ``profiles/default/`` needs no installing: Snakemake
applies it from the repository by itself.

An installed profile is a copy: edit the copy (partition, account, GPU model),
or edit ``profiles/<NAME>/`` and install again with ``--force`` (the previous copy
is kept as ``<NAME>.bak``).
"""
from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

# The repository root when the package is installed editable (src/autonorm/workflow_support/ -> ../../..).
CHECKOUT = Path(__file__).resolve().parents[3]
# profiles/default is the workflow profile Snakemake applies from the repository itself.
NOT_INSTALLABLE = {"default"}


class ProfileInstallError(RuntimeError):
    pass


def snakemake_user_config_dir() -> Path:
    """The folder Snakemake searches for ``--profile NAME`` (after ``./NAME``).

    Snakemake asks platformdirs for ``AppDirs("snakemake", "snakemake")``; we ask the
    same library, so the answer agrees on Linux, macOS and with ``XDG_CONFIG_HOME``.
    """
    try:
        from platformdirs import AppDirs
    except ImportError:  # platformdirs comes with snakemake; without it, the Linux rule
        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        return Path(base) / "snakemake"
    return Path(AppDirs("snakemake", "snakemake").user_config_dir)


def shipped_profiles(profiles_dir: Path) -> List[str]:
    if not profiles_dir.is_dir():
        return []
    return sorted(p.name for p in profiles_dir.iterdir()
                  if (p / "config.yaml").is_file() and p.name not in NOT_INSTALLABLE)


def find_source(name: str, source: Optional[Path] = None) -> Path:
    """The shipped profile folder: ``--source``, else ``profiles/NAME`` of this checkout,
    else of the current directory when it is a checkout of this workflow."""
    if source is not None:
        candidates = [Path(source)]
    else:
        candidates = [CHECKOUT / "profiles" / name]
        cwd = Path.cwd()
        if (cwd / "Snakefile").is_file():
            candidates.append(cwd / "profiles" / name)
    for c in candidates:
        if (c / "config.yaml").is_file():
            return c.resolve()
    known = shipped_profiles(CHECKOUT / "profiles") or shipped_profiles(Path.cwd() / "profiles")
    raise ProfileInstallError(
        f"no profile {name!r}: none of {', '.join(str(c / 'config.yaml') for c in candidates)} exists. "
        + (f"Shipped profiles: {', '.join(known)}. " if known else "")
        + "Run this from the repository root, or pass --source <folder with config.yaml>.")


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


def install_profile(name: str, dest_root: Optional[Path] = None, source: Optional[Path] = None,
                    force: bool = False) -> tuple[Path, str]:
    """Copy profile ``name`` to ``dest_root/name``; returns (destination, what happened).

    What happened is "installed", "unchanged" (an identical copy is there) or
    "replaced" (with ``force``; the old copy moved to ``<name>.bak``). A different
    copy without ``force`` is left alone and raises ProfileInstallError.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name) or name in NOT_INSTALLABLE:
        raise ProfileInstallError(f"{name!r} is not an installable profile name "
                                  f"(profiles/default is applied by Snakemake from the repository itself)")
    src = find_source(name, source)
    root = Path(dest_root) if dest_root is not None else snakemake_user_config_dir()
    dest = root / name
    if dest.exists() and not dest.is_dir():
        raise ProfileInstallError(f"{dest} exists and is not a folder; move it away first")
    if dest.is_dir() and _same_tree(src, dest):
        return dest, "unchanged"
    if dest.is_dir() and not force:
        raise ProfileInstallError(
            f"{dest} already holds a different profile (your edits, or an older version). "
            f"Compare with: diff -r {src} {dest}; replace it with --force (the old copy is kept as {dest}.bak).")
    root.mkdir(parents=True, exist_ok=True)
    # Copy next to the destination first, so a failed copy never leaves half a profile.
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
    try:
        shutil.copytree(src, staging / name)
        what = "installed"
        if dest.is_dir():
            backup = root / f"{name}.bak"
            if backup.is_dir():
                shutil.rmtree(backup)
            elif backup.exists():
                backup.unlink()
            dest.rename(backup)
            what = "replaced"
        (staging / name).rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest, what


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="autonorm-install-profile",
        description="Copy a shipped Snakemake profile (profiles/<NAME>/) to the folder where "
                    "`snakemake --profile NAME` finds it (~/.config/snakemake/<NAME> on Linux).")
    p.add_argument("name", nargs="?", default="slurm", help="profile to install (default: slurm)")
    p.add_argument("--source", type=Path, default=None,
                   help="the profile folder to copy (default: profiles/<NAME> of this checkout)")
    p.add_argument("--dest", type=Path, default=None,
                   help="install below this folder instead of Snakemake's user config folder "
                        "(Snakemake only finds it there if it is that folder or /etc/xdg/snakemake)")
    p.add_argument("--force", action="store_true",
                   help="replace a different installed copy (kept as <NAME>.bak)")
    args = p.parse_args(argv)
    try:
        dest, what = install_profile(args.name, args.dest, args.source, args.force)
    except (ProfileInstallError, OSError) as e:
        print(f"autonorm-install-profile: {e}", file=sys.stderr)
        return 2
    if what == "unchanged":
        print(f"{dest}: already installed, identical to the shipped profile")
    else:
        print(f"{what} {dest}" + (f" (previous copy: {dest.parent / (dest.name + '.bak')})"
                                  if what == "replaced" else ""))
    print(f"Use it from the repository root: snakemake all --profile {args.name}")
    if args.name == "slurm":
        print(f"Before the first real run, set partition, account, gpu_model and cores in {dest / 'config.yaml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
