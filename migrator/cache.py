"""A content cache: results keyed by file content, tool, rule selection and target version.

Only files that pass the textual prefilter reach the cache (for the others the prefilter is
cheaper than a cache lookup), so a second run over an unchanged repository parses nothing.
Entries are small JSON files under the user's cache directory, written atomically, so
concurrent worker processes and concurrent runs never see a half-written entry.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Optional, Union

from jaxmigrate.migrator import __version__

_FORMAT = "v1"


def default_cache_dir() -> Path:
    explicit = os.environ.get("JAXMIGRATE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jaxmigrate"


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
        try:
            with open(self._path(raw), encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return None

    def put(self, raw: bytes, entry: dict) -> None:
        path = self._path(raw)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle)
            os.replace(temp, path)
        except OSError:
            pass  # a cache that cannot be written is only slower
