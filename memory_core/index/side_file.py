"""Files kept next to the store (the IVF index, the vector snapshot): written atomically, never trusted.

Both are derived from the store and can be thrown away at any time. What they share:

* **Atomic replacement.** A file is written to ``.<name>.<pid>-<random>.tmp`` in the same directory, flushed
  to disk and renamed over the old one, so a reader sees the old file or the new one, never half of
  one; a writer killed mid-write leaves only its temporary file, which the next writer removes once
  the process named in it is gone.
* **Removal.** A file that is stale, damaged or holds a forgotten record's vector is deleted; a
  missing file is not an error.
"""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path
from typing import BinaryIO, Callable

log = logging.getLogger(__name__)


def write_atomically(path: Path, write_body: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` through ``write_body(file)`` into a temporary file, then rename it into place."""
    remove_abandoned(path)
    # the pid says whose it is (see remove_abandoned); the random part keeps two threads of one
    # process from writing, and renaming, the same temporary file
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as out:
            write_body(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_abandoned(path: Path) -> None:
    """Delete temporary files of writers that died mid-write (killed, say): each is named by its
    writer's pid, and one whose process is gone will never be renamed into place."""
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            pid = int(stale.name.rsplit(".", 2)[-2].split("-")[0])
            os.kill(pid, 0)
        except ProcessLookupError:
            stale.unlink(missing_ok=True)
        except (ValueError, PermissionError, OSError):
            continue  # not ours to judge (a live process of another user, or a foreign name)


def remove(path: Path, why: str) -> bool:
    """Delete ``path`` (logging why); True if a file was there."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    log.info("removed %s: %s", path, why)
    return True
