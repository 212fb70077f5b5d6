"""Reading and writing source files without ever losing data.

Encodings follow PEP 263 (cookie or BOM, default UTF-8); line endings and a missing final
newline survive because the text is never newline-translated.  Writes go to a temporary file
in the same directory, keep the permission bits, and replace the original atomically, and
only if the file on disk is still the one that was read.
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import os
import stat
import tokenize
from pathlib import Path


class FileError(Exception):
    """A file that cannot be read or written; the message names the reason."""


@dataclasses.dataclass
class SourceFile:
    path: Path
    text: str
    encoding: str  # the codec that reproduces the original bytes (utf-8-sig keeps a BOM)
    raw: bytes

    @classmethod
    def from_bytes(cls, path: Path, raw: bytes) -> "SourceFile":
        if b"\x00" in raw:
            raise FileError("contains NUL bytes: not a Python source file")
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError as error:
            raise FileError(
                f"cannot decode: {error.msg if hasattr(error, 'msg') else error}"
            ) from None
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as error:
            declared = "declared" if encoding not in ("utf-8", "utf-8-sig") else "default"
            raise FileError(
                f"cannot decode with the {declared} encoding {encoding} "
                f"(byte {error.start}: {error.reason})"
            ) from None
        except LookupError:
            raise FileError(f"unknown encoding {encoding!r} in the coding declaration") from None
        if encoding == "utf-8" and raw.startswith(codecs.BOM_UTF8):
            encoding = "utf-8-sig"
        return cls(path, text, encoding, raw)

    def encode(self, text: str) -> bytes:
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError as error:
            raise FileError(f"the new text cannot be encoded as {self.encoding}: {error}") from None


def read_source(path: Path) -> SourceFile:
    try:
        raw = path.read_bytes()  # (what went wrong is asked only when it fails)
    except OSError as error:
        if path.is_symlink() and not path.exists():
            raise FileError("dangling symbolic link") from None
        if path.is_dir():
            raise FileError("is a directory") from None
        if isinstance(error, PermissionError):
            raise FileError("permission denied (cannot read)") from None
        raise FileError(f"cannot read: {error.strerror or error}") from None
    return SourceFile.from_bytes(path, raw)


def is_read_only(path: Path) -> bool:
    mode = os.stat(path).st_mode
    return not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def write_source(source: SourceFile, text: str) -> None:
    """Atomically replace the file (through a symlink, the link's target) with ``text``."""
    import tempfile  # (on use: a run that writes nothing never loads it)

    data = source.encode(text)
    real = Path(os.path.realpath(source.path))
    if is_read_only(real):
        raise FileError("file is read-only; not modified")
    try:
        current = real.read_bytes()
    except OSError as error:
        raise FileError(f"cannot re-read before writing: {error.strerror or error}") from None
    if current != source.raw:
        raise FileError("changed on disk while it was being migrated; not overwritten")
    mode = stat.S_IMODE(os.stat(real).st_mode)
    fd, temp_name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".jaxmigrate", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, real)
    except BaseException as error:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise FileError(f"cannot write (original kept): {error.strerror or error}") from None
        raise
