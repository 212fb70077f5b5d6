"""A content cache: results keyed by file content, tool, rule selection and target version.

Only files that pass the textual prefilter reach the cache (for the others the prefilter is
cheaper than a cache lookup), so a second run over an unchanged repository parses nothing.
Entries are small JSON files under the user's cache directory, written atomically, so
concurrent worker processes and concurrent runs never see a half-written entry.

The cache is bounded: a read marks its entry used (its modification time), and at most once
an hour a run sweeps the directory, and when it holds more than :func:`max_bytes` (64 MB, or
``$JAXMIGRATE_CACHE_MAX_MB``) deletes the least recently used entries down to three quarters
of it.  Entries of an older jaxmigrate or of settings no longer used are never read again, so
they go first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple, Union

from jaxmigrate.migrator import __version__

_FORMAT = "v1"
DEFAULT_MAX_MB = 64
SWEEP_EVERY = 3600.0  # seconds between two sweeps of one cache directory
_STAMP = "last-sweep"


def max_bytes() -> int:
    """The size the cache is kept under: ``$JAXMIGRATE_CACHE_MAX_MB`` megabytes, else 64."""
    try:
        megabytes = float(os.environ.get("JAXMIGRATE_CACHE_MAX_MB", DEFAULT_MAX_MB))
    except ValueError:
        megabytes = DEFAULT_MAX_MB
    return max(0, int(megabytes * 2**20))


def default_cache_dir() -> Path:
    explicit = os.environ.get("JAXMIGRATE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jaxmigrate"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Changes whenever the tool's own code changes (not only on a version bump)."""
    from jaxmigrate import migrator, rules

    digest = hashlib.sha256(__version__.encode())
    for package in (migrator, rules):
        root = Path(package.__file__ or "").parent
        for path in sorted(
            [*root.glob("*.py"), *root.glob("data/*")]
        ):  # code, and the data it reads
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class ResultCache:
    """``settings_key``: the settings' :meth:`Settings.cache_key`, or the function that gives
    it, called on the first lookup (it imports the rules)."""

    def __init__(self, directory: Path, settings_key: Union[str, Callable[[], str]]) -> None:
        self.directory = directory / _FORMAT
        self._settings_key = settings_key

    @functools.cached_property
    def prefix(self) -> str:
        key = self._settings_key if isinstance(self._settings_key, str) else self._settings_key()
        return hashlib.sha256(f"{code_fingerprint()}|{key}".encode()).hexdigest()[:16]

    def _path(self, raw: bytes) -> Path:
        key = hashlib.sha256(self.prefix.encode() + raw).hexdigest()
        return self.directory / key[:2] / f"{key[2:]}.json"

    def get(self, raw: bytes) -> Optional[dict]:
        path = self._path(raw)
        try:
            with open(path, encoding="utf-8") as handle:
                entry = json.load(handle)
        except (OSError, ValueError):
            return None
        try:
            os.utime(path)  # used now: the sweep deletes the least recently used first
        except OSError:
            pass
        return entry

    def put(self, raw: bytes, entry: dict) -> None:
        import tempfile  # (on use: a run that writes nothing never loads it)

        path = self._path(raw)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle)
            os.replace(temp, path)
        except OSError:
            pass  # a cache that cannot be written is only slower


def sweep(root: Path, limit: Optional[int] = None, force: bool = False) -> int:
    """Keep the cache under ``root`` (every format's entries) within ``limit`` bytes (default
    :func:`max_bytes`): unless ``force``, only when the last sweep is an hour old.  Deletes the
    least recently used entries down to three quarters of the limit, and temporary files
    a killed writer left; returns the bytes freed.  Errors (a concurrent sweep, a read-only
    directory) only leave more behind."""
    limit = max_bytes() if limit is None else limit
    stamp = root / _STAMP
    now = time.time()
    try:
        if not force and now - stamp.stat().st_mtime < SWEEP_EVERY:
            return 0
    except OSError:
        if not os.path.isdir(root):  # (False too where it cannot be reached)
            return 0
    try:
        stamp.touch()
    except OSError:
        return 0
    entries: List[Tuple[float, int, str]] = []
    total = freed = 0
    for directory, _subdirectories, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            if name.endswith(".tmp") and now - info.st_mtime > SWEEP_EVERY:
                entries.append((0.0, info.st_size, path))  # a killed writer's: first to go
            elif name.endswith((".json", ".gates")):  # results; gates (migrator.gateplan)
                entries.append((info.st_mtime, info.st_size, path))
            else:
                continue
            total += info.st_size
    goal = limit * 3 // 4 if total > limit else total
    for mtime, size, path in sorted(entries):  # a killed writer's files, then the oldest
        if mtime and total <= goal:
            break
        try:
            os.unlink(path)
        except OSError:
            continue
        total -= size
        freed += size
    return freed
