"""One writer per run folder: an exclusive, non-blocking lock on ``<run_dir>/.lock``.

Two trainers on one folder would interleave their outputs (one run's
``config.json`` beside the other's metrics). The holder writes its pid, host and
start time into the lock file so the one refused can say who holds it. The lock
is ``flock``: the kernel drops it when the holder dies, so a killed run never
leaves the folder locked (the file itself stays, harmlessly).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

# the error lives with the other errors every entry point names (io_utils), below cli.py
from ..io_utils import RunFolderBusy

LOCK_NAME = ".lock"


class RunFolderLock:
    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> "RunFolderLock":
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # no O_TRUNC: the holder's record stays
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise RunFolderBusy(f"run folder {self.run_dir} is in use by another training process "
                                f"({holder}); wait for it to finish or stop it, then rerun") from None
        except BaseException:
            os.close(fd)
            raise
        record = {"pid": os.getpid(), "host": socket.gethostname(),
                  "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    try:
        rec = json.loads(os.pread(fd, 4096, 0).decode() or "null")
        return f"pid {rec['pid']} on host {rec['host']}, started {rec['started_utc']}"
    except (ValueError, TypeError, KeyError, OSError):
        return "holder unknown: it has not written its record yet"
