"""``autonorm-data download --from DIR``: take a dataset's raw files from a local folder.

Why: compute nodes are often offline, and the data usually exists somewhere
already (a mirror, a Debian package such as ``dataset-fashion-mnist``, a
colleague's copy), in whatever sub-layout.  The accepted files are found by
name anywhere below DIR; where several files share a name (a mirror holding
MNIST and Fashion-MNIST), the one whose content verifies wins, then the one
whose path names the dataset.  They are copied (each atomically: temporary
name, then rename) to where the loaders expect them in ``R/<dataset>/``;
other accepted forms already there (which a loader might prefer) and files
derived from the replaced ones are removed.  The caller then verifies them
exactly like files placed by hand.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import registry
from .errors import DataCorruptError, DataError, DataMissingError
from ..io_utils import umask_mode
from .integrity import file_hash, missing_error

Plan = List[Tuple[Path, str]]  # (source file or folder, destination relative to R/<dataset>)

#: a walk of a --from folder stops at this many folders (a whole disk named by mistake)
MAX_FOLDERS = 20_000


class Index:
    """Every file and folder below DIR, by name (one walk).

    Symbolic links to folders are followed (a mirror is often a tree of links), but each real
    folder is walked once: a link back up the tree (``ln -s . again``) is skipped, and the walk
    is bounded (:data:`MAX_FOLDERS`)."""

    def __init__(self, root: Path):
        self.root = root
        self.files: Dict[str, List[Path]] = {}
        self.dirs: Dict[str, List[Path]] = {}
        seen = set()
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            try:
                st = os.stat(dirpath)
                real = (st.st_dev, st.st_ino)
            except OSError:
                dirnames[:] = []
                continue
            if real in seen:  # reached again through a link: walked already
                dirnames[:] = []
                continue
            seen.add(real)
            if len(seen) > MAX_FOLDERS:
                raise DataError(f"--from {root}: more than {MAX_FOLDERS:,} folders below it; name the "
                                "folder that holds the dataset's files, not a whole disk")
            dirnames.sort()
            base = Path(dirpath)
            for d in dirnames:
                self.dirs.setdefault(d, []).append(base / d)
            for f in sorted(filenames):
                self.files.setdefault(f, []).append(base / f)

    def all_dirs(self) -> List[Path]:
        return [p for ps in self.dirs.values() for p in ps] + [self.root]


def _source(name: str):
    """The DatasetSource of a dataset or of an official corruption set's files; None for others."""
    try:
        return registry.source_of(name)
    except KeyError:
        return None


def _hinted(name: str, p: Path) -> bool:
    s, src = str(p).lower(), _source(name)
    if src is None:
        return False
    return any(h in s for h in src.hints) and not any(h in s for h in src.not_hints)


def pick(name: str, what: str, cands: Sequence[Path], good: Optional[Callable[[Path], bool]]) -> Optional[Path]:
    """The candidate whose content verifies; else the only one; else the only one whose path names the dataset."""
    cands = list(cands)
    if not cands:
        return None
    if good is not None:
        for c in cands:
            try:
                if good(c):
                    return c
            except Exception:  # unreadable candidate: not the one; the loader will report if chosen
                continue
    if len(cands) == 1:
        return cands[0]
    hinted = [c for c in cands if _hinted(name, c)]
    if len(hinted) == 1:
        return hinted[0]
    raise DataCorruptError(f"Dataset {name!r}: several candidates for {what} below the --from folder and none "
                           f"verifies: {', '.join(str(c) for c in cands)}. Point --from at the folder that holds "
                           f"the one you mean.")


def checksum_ok(dataset: str, rel: str) -> Callable[[Path], bool]:
    algo, want = registry.CHECKSUMS[dataset][rel]
    return lambda p: file_hash(p, algo) == want


def idx_ok(dataset: str, base: str) -> Callable[[Path], bool]:
    want = registry.IDX_MD5[dataset][base]
    return lambda p: file_hash(p, "md5", decompressed=p.name.endswith(".gz")) == want


# ------------------------------------------------------------------ plans (a dataset's own is on its DatasetSource)
def plan_files(rels_by_name: Dict[str, str], dataset: str):
    def plan(name, ix: Index, opts):
        out, missing = [], []
        for fname, rel in rels_by_name.items():
            good = checksum_ok(dataset, rel) if rel in registry.CHECKSUMS.get(dataset, {}) else None
            src = pick(name, fname, ix.files.get(fname, []), good)
            if src is None:
                missing.append(rel)
            else:
                out.append((src, rel))
        return out, [], missing
    return plan


def plan_alternatives(alts: List[Tuple[str, str]], dataset: str):
    """First accepted single-file form found (a verified one preferred); the other forms are removed."""
    def plan(name, ix: Index, opts):
        found = []
        for fname, rel in alts:
            good = checksum_ok(dataset, rel) if rel in registry.CHECKSUMS.get(dataset, {}) else None
            src = pick(name, fname, ix.files.get(fname, []), good)
            if src is not None:
                found.append((src, rel, good is not None and good(src)))
        if not found:
            return [], [], [tuple(rel for _, rel in alts)]
        src, rel, _ = next((f for f in found if f[2]), found[0])
        return [(src, rel)], [r for _, r in alts if r != rel], []
    return plan


def _planner(name: str) -> Optional[Callable]:
    src = _source(name)
    return src.plan_from if src is not None else None


def _quick_check(name: str, src: Path, rel: str) -> Optional[Tuple[bool, str]]:
    """(ok, expected) for files with a registered checksum, before copying; None when only the loader can tell."""
    base = Path(rel).name
    plain = base[:-3] if base.endswith(".gz") else base
    if plain in registry.IDX_MD5.get(name, {}):
        want = registry.IDX_MD5[name][plain]
        try:
            return idx_ok(name, plain)(src), f"md5 of the uncompressed bytes {want}"
        except Exception:
            return False, f"a readable IDX file with md5 of the uncompressed bytes {want}"
    if src.is_file() and rel in registry.CHECKSUMS.get(name, {}):
        algo, want = registry.CHECKSUMS[name][rel]
        if name in registry.DATASETS and {"*", rel} & set(registry.source_of(name).loader_verifies):
            return None  # other containers of the same content are accepted: the loader verifies them
        return checksum_ok(name, rel)(src), f"{algo} {want}"
    return None


def _precheck(name: str, plan: Plan) -> None:
    bad = []
    for src, rel in plan:
        res = _quick_check(name, src, rel)
        if res is not None and not res[0]:
            bad.append(f"{src} (expected {res[1]})")
    if bad:
        raise DataCorruptError(f"Dataset {name!r}: the --from folder has files of the right name but not "
                               f"{name}'s content, so nothing was copied: {'; '.join(bad)}. Point --from at "
                               f"the official files, or pass --allow-unverified to copy and use them anyway.")


# ------------------------------------------------------------------ copying
def _same(a: Path, b: Path) -> bool:
    try:
        return b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _copy_file(src: Path, dst: Path) -> None:
    if _same(src, dst):
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".part", dir=str(dst.parent))
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, umask_mode())
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _copy_dir(src: Path, dst: Path) -> None:
    if _same(src, dst):
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", suffix=".part", dir=str(dst.parent)))
    try:
        shutil.copytree(src, tmp, dirs_exist_ok=True)
        os.chmod(tmp, 0o755)
        if dst.exists():
            shutil.rmtree(dst)
        os.rename(tmp, dst)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif p.exists() or p.is_symlink():
        p.unlink()
    else:
        return
    print(f"[autonorm-data] removed {p} (replaced by the files from --from)", file=sys.stderr)


def place_from(name: str, raw_dir: os.PathLike, from_dir: os.PathLike, options: Dict) -> List[str]:
    """Copy ``name``'s accepted raw files from ``from_dir`` into ``R/<name>/``; returns the destinations."""
    src_root = Path(from_dir)
    if not src_root.is_dir():
        raise DataMissingError(f"--from {src_root}: no such folder")
    spec = registry.DATASETS.get(name)
    if spec is not None and not spec.needs_download:
        return []  # smoke sets: nothing to copy
    planner = _planner(name)
    if planner is None:
        raise KeyError(f"no --from support for dataset {name!r}")
    plan, stale, missing = planner(name, Index(src_root), options)
    if missing:
        raise missing_error(name, raw_dir, missing,
                            note=f"Searched {src_root.resolve()} (all sub-folders) for these file names and "
                                 "found none of the accepted forms.")
    if not options.get("allow_unverified"):
        _precheck(name, plan)  # nothing in R/<name> changes for a copy that cannot verify
    root = Path(raw_dir) / name
    for rel in stale:
        _remove(root / rel)
    for src, rel in plan:
        (_copy_dir if src.is_dir() else _copy_file)(src, root / rel)
        print(f"[autonorm-data] {name}: {src} -> {root / rel}", file=sys.stderr)
    return [rel for _, rel in plan]


def remove_copies(name: str, raw_dir: os.PathLike, copied: List[str]) -> None:
    """Undo ``place_from`` for files that then failed verification (and what was extracted from them)."""
    root = Path(raw_dir) / name
    for rel in copied:
        for p in (root / rel, root / rel[:-3]) if rel.endswith(".gz") else (root / rel,):
            _remove(p)
