"""The on-disk cache of compiled artifacts, shared by the code-generating backends and private
to the user who runs numpile.

A backend stores bytes under a name relative to `config.cache_dir`, with a header of its own
that says what the bytes are (its format version and cache key):

    from numpile import disk_cache
    obj = disk_cache.read(f"llvm/{key}.o", header)     # the bytes, or None: compile them
    disk_cache.write(f"llvm/{key}.o", header, obj)

A file holds the header, the payload and the payload's SHA-256. `read` returns the payload only
from a file that this user owns and that neither group nor others can write, in
directories (cache_dir and each level below it) that this user owns, whose header is the one
asked for and whose checksum matches: bytes written by anyone else are never loaded. A file or
directory owned by another user is skipped with one warning naming it; anything else unusable
(missing, truncated, another format) is a miss, logged under `perf`.

`write` makes every directory it creates 0700 (cache_dir's missing parents included) and every
file 0600; directories that exist already are left as their owner made them. A directory of
this user that group or others can write is used, since each file is checked on its own: who
can write there can delete entries (a recompile) but cannot get code loaded. The file is
written under a unique temporary name and renamed into place, so processes writing the same
entry at once never mix their bytes and readers see a whole file or none.

Nothing here raises for a disk problem. Where cache_dir cannot be used (under a plain file, on a
read-only file system, without write permission, on a full disk), the first failure warns once,
naming cache_dir and the reason, and the cache is off for that directory for the rest of the
process: nothing more is written there (entries already there are still read), and tools that
need a directory or a file of their own (`directory`, `source_file`) get one in a private
temporary directory of this process instead, removed when it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import shutil
import stat
import tempfile
import warnings
from pathlib import Path

from . import config, logs

_DIGEST_SIZE = hashlib.sha256().digest_size
_warned: set[Path] = set()  # paths already warned about: one warning each per process
_off: set[Path] = set()     # cache directories that could not be written to (warned once each)


def read(name: str, header: bytes) -> bytes | None:
    """The payload stored under `name` with this `header`, or None where there is no usable one."""
    path = Path(config.cache_dir) / name
    data = _read_private(path)
    if data is None:
        return None
    body = data[len(header):]
    if not data.startswith(header) or len(body) < _DIGEST_SIZE or body[-_DIGEST_SIZE:] != _digest(body[:-_DIGEST_SIZE]):
        logs.get("perf").debug("ignoring the unusable cache file %s", path)
        return None
    return body[:-_DIGEST_SIZE]


def write(name: str, header: bytes, payload: bytes) -> None:
    """Store `payload` under `name`, replacing what was there in one step."""
    _store(name, header + payload + _digest(payload))


def source_file(name: str, text: str) -> Path:
    """A file holding `text`, for a tool that reads its input from a file by name (Triton reads
    its kernels' source from their module's file): `name` under cache_dir, written unless it
    holds `text` already, or where the cache is off, a file of this process's own."""
    data = text.encode()
    path = Path(config.cache_dir) / name
    if _read_private(path) == data:
        return path
    stored = _store(name, data)
    if stored is not None:
        return stored
    path = _scratch() / name
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def directory(name: str) -> Path:
    """A directory of this user's, for a tool that keeps files of its own (Triton's cache of
    compiled kernels): `name` under cache_dir, made 0700 where missing, where a file can be
    written now, or where the cache is off (or that directory is another user's), one of this
    process's own."""
    probe = _store(f"{name}/.probe", b"probe")   # a write that fails turns the cache off and says why
    if probe is not None:
        probe.unlink(missing_ok=True)
        return probe.parent
    path = _scratch() / name
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def _read_private(path: Path) -> bytes | None:
    """The bytes of the file at `path` if this user alone wrote it (and every directory down to
    it, from cache_dir, is this user's), else None."""
    try:
        if not _usable_dirs(path.parent, create=False):
            return None
        with open(path, "rb") as f:
            # the opened file is checked, not the name, which another process may swap meanwhile
            why = _not_private(os.fstat(f.fileno()), is_file=True)
            if why:
                _warn(path, why)
                return None
            return f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        logs.get("perf").debug("cannot read the cache file %s: %s", path, e)
        return None


def _store(name: str, data: bytes) -> Path | None:
    """Write `data` to `name` under cache_dir in one step; the file's path, or None where the
    cache is off (this failure may be what turns it off)."""
    root = Path(config.cache_dir)
    if root in _off:
        return None
    path = root / name
    try:
        if not _usable_dirs(path.parent, create=True):
            return None
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # 0600, a name no other writer has
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            # no fsync: a file torn by a crash fails its checksum and is rebuilt
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as e:
        _turn_off(root, e)
        return None
    return path


def _turn_off(root: Path, why) -> None:
    """No more writes under cache_dir `root` in this process; said once."""
    if root not in _off:
        _off.add(root)
        warnings.warn(f"numpile's disk cache is off: cannot write to {root} ({why}); compiled code "
                      f"runs but is not kept for later processes", RuntimeWarning, stacklevel=2)


@functools.cache
def _scratch() -> Path:
    """This process's own directory (0700), removed when it exits."""
    path = Path(tempfile.mkdtemp(prefix="numpile-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _digest(payload: bytes) -> bytes:
    return hashlib.sha256(payload).digest()


def _usable_dirs(directory: Path, create: bool) -> bool:
    """Whether cache_dir and each level below it down to `directory` exist and are this user's;
    with `create`, missing levels are made first (OSError where that fails)."""
    root = Path(config.cache_dir)
    parts = directory.relative_to(root).parts
    for level in (root.joinpath(*parts[:i]) for i in range(len(parts) + 1)):
        try:
            st = os.stat(level)
        except FileNotFoundError:
            if not create:
                return False
            _make_dirs(level)
            st = os.stat(level)
        why = _not_private(st, is_file=False)
        if why:
            _warn(level, why)
            return False
    return True


def _make_dirs(path: Path) -> None:
    """Make `path` and its missing parents, each 0700 (os.makedirs gives parents the umask's mode)."""
    if not path.parent.exists():
        _make_dirs(path.parent)
    with contextlib.suppress(FileExistsError):  # another process made it meanwhile
        os.mkdir(path, 0o700)


def _not_private(st: os.stat_result, is_file: bool) -> str | None:
    """Why a file or directory with this stat is not one this user alone wrote, or None."""
    if not hasattr(os, "geteuid"):  # Windows: no owner ids to compare; the profile's ACLs apply
        return None
    if st.st_uid != os.geteuid():
        return f"it is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if is_file and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "group or others can write it"
    return None


def _warn(path: Path, why: str) -> None:
    if path not in _warned:
        _warned.add(path)
        warnings.warn(f"numpile's disk cache ignores {path}: {why}")
