"""One way for every entry point to fail: a paragraph a person can act on, and an exit code.

Every ``autonorm-*`` command runs its work through :func:`guarded`. A problem the user can fix (a
missing or damaged file, a full disk, a read-only folder, a bad argument) ends the command with
one paragraph on stderr: what is wrong, which file, what to do, and the exit code of its kind.
The Python traceback is shown only with ``--debug`` (an unexpected error, a bug, says so).

Exit codes (README "Exit codes"):

====  =====================================================================================
0     done
1     unexpected error (a bug, or an input nobody foresaw): rerun with ``--debug``
2     bad argument or config (and ``autonorm-data``: raw data missing or failing verification;
      ``autonorm-evaluate``: the run folder belongs to another config)
3     training diverged (``autonorm-train`` without ``--record-divergence``)
4     the run folder is busy: another process writes it
5     an output cannot be written: disk full, read-only folder, permission denied
6     an input is missing: a file or folder that should exist does not
7     an input is damaged: a processed split, a model or a table differs from what was recorded
      or cannot be read
====  =====================================================================================
"""
from __future__ import annotations

import errno
import sys
import traceback
from typing import Callable, Sequence

EXIT_BUG, EXIT_USAGE, EXIT_DIVERGED, EXIT_BUSY, EXIT_WRITE, EXIT_MISSING, EXIT_DAMAGED = 1, 2, 3, 4, 5, 6, 7


def explain(exc: BaseException) -> tuple[int, str]:
    """(exit code, one paragraph) for an exception that reached an entry point."""
    from .config.run_config import ConfigError
    from .data.errors import DataCorruptError, DataError, DataMissingError
    from .io_utils import DamagedRunFile, RunFolderBusy, WriteFailed

    if isinstance(exc, WriteFailed):
        return EXIT_WRITE, f"{exc} Free disk space or make the folder writable, then rerun."
    if isinstance(exc, RunFolderBusy):
        return EXIT_BUSY, f"{exc}"
    if isinstance(exc, (DamagedRunFile, DataCorruptError)):
        return EXIT_DAMAGED, str(exc)
    if isinstance(exc, DataMissingError):
        return EXIT_MISSING, str(exc)
    if isinstance(exc, (ConfigError, DataError)):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, OSError):
        name = exc.filename or "(a file)"
        if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return EXIT_WRITE, (f"permission denied on {name} ({exc.strerror}). Make it readable and "
                                "writable for this user, or point the command at another folder.")
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return EXIT_WRITE, f"no space left writing {name}. Free disk space, then rerun."
        if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            return EXIT_MISSING, (f"{name} does not exist ({exc.strerror}). Check the path; a file "
                                  "of the pipeline is made by the rule that writes it (rerun "
                                  "snakemake).")
        return EXIT_MISSING, f"cannot read or write {name}: {exc.strerror or exc}."
    if isinstance(exc, (UnicodeDecodeError, ValueError)) and "JSON" in type(exc).__name__ + str(exc):
        return EXIT_DAMAGED, (f"a file could not be parsed ({exc}). It is damaged or was written "
                              "by something else: remake it with the rule that writes it.")
    return EXIT_BUG, (f"unexpected error: {type(exc).__name__}: {exc}. This is a bug or an input "
                      "nobody foresaw: rerun with --debug for the traceback and report it.")


def guarded(prog: str, main: Callable[[list[str]], int], argv: Sequence[str] | None = None) -> int:
    """Run ``main(argv)``; a raised error becomes :func:`explain`'s paragraph on stderr and its
    exit code (``--debug``, anywhere in argv: the traceback instead)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    try:
        return main(argv)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 -- the point of this function
        if debug:
            traceback.print_exc()
        code, text = explain(exc)
        print(f"{prog}: error: {text}", file=sys.stderr)
        return code
