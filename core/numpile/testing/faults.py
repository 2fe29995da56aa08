"""Cache directories numpile cannot use, made for real, for the tests of backends that write to
the disk cache: a compile must still run (compiled) and say once why nothing is kept.

    from numpile.testing.faults import UNUSABLE_CACHES, check_backend_with_unusable_cache

    @pytest.mark.parametrize("kind", UNUSABLE_CACHES)
    def test_an_unusable_cache_costs_one_warning(kind, tmp_path):
        check_backend_with_unusable_cache("mybackend", kind, tmp_path)

Each kind runs a child process with NUMPILE_CACHE_DIR pointing where it cannot be used: under a
plain file; on a read-only file system and on a full disk (tmpfs mounts in a user and mount
namespace of the child's own, `unshare`: the test is skipped where the kernel allows none);
in a directory without write permission (for root, whom permission bits do not stop, the child
runs without the capabilities that override them, `setpriv`).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

# kind -> the errno whose message the warning gives as the reason
UNUSABLE_CACHES = {
    "under a plain file": errno.ENOTDIR,
    "on a read-only file system": errno.EROFS,
    "without write permission": errno.EACCES,
    "on a full disk": errno.ENOSPC,
}

_MOUNT = 'mount -t tmpfs -o "$1" none "$2" && {} && shift 2 && exec "$@"'
_MOUNTS = {  # kind -> (the tmpfs's options, what runs in it before the child)
    "on a read-only file system": ("ro,size=64k", "true"),
    "on a full disk": ("size=64k", 'mkdir "$2/cache" && { cat /dev/zero > "$2/fill"; true; } 2>/dev/null'),
}


def run_with_unusable_cache(kind: str, tmp_path: Path, source: str, timeout: float = 300) -> tuple[Path, subprocess.CompletedProcess]:
    """Run the Python `source` in a child whose cache directory is unusable as `kind` says; the
    cache directory and the finished child (stdout and stderr as text)."""
    place = tmp_path / "unusable"
    place.mkdir()
    prefix: list[str] = []
    if kind == "under a plain file":
        place = place / "plain"
        place.write_text("")
    elif kind in _MOUNTS:
        _need_namespaces()
        options, prepare = _MOUNTS[kind]
        prefix = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _MOUNT.format(prepare),
                  "sh", options, str(place)]
    elif kind == "without write permission":
        place.chmod(0o500)
        if os.geteuid() == 0:
            _need("setpriv")
            caps = "-dac_override,-dac_read_search"
            prefix = ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]
    else:
        raise ValueError(f"unknown kind of unusable cache {kind!r}; known: {', '.join(UNUSABLE_CACHES)}")
    cache_dir = place / "cache"
    env = {**os.environ, "NUMPILE_CACHE_DIR": str(cache_dir)}
    env.pop("TRITON_CACHE_DIR", None)
    done = subprocess.run([*prefix, sys.executable, "-c", source], env=env, capture_output=True, text=True,
                          timeout=timeout)
    return cache_dir, done


_CHILD = textwrap.dedent("""
    import json, warnings
    import numpy as np
    import numpile
    from numpile.testing import assert_same

    def f(x, y):
        return np.sin(x) * 2 + y.sum()

    compiled = numpile.compile(f, backend={backend!r})
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n, dtype in [(5, "f8"), (3, "f8"), (7, "f4"), (5, "f8"), (9, "i4")]:   # four compiles, a hit
            x, y = (rng.standard_normal(n) * 10).astype(dtype), rng.standard_normal(n)
            assert_same(compiled(x, y), f(x, y))
    entries = compiled.all_entries()
    print(json.dumps({{"warnings": [str(w.message) for w in caught],
                      "backends": sorted({{e.backend for e in entries}}), "compiled": sum(not e.eager for e in entries)}}))
""")


def check_backend_with_unusable_cache(backend: str, kind: str, tmp_path: Path) -> None:
    """A function compiled with `backend` and a cache directory unusable as `kind` says returns
    NumPy's results over four compiles, compiled by `backend`, with exactly one warning, which
    names the cache directory and the reason."""
    cache_dir, done = run_with_unusable_cache(kind, tmp_path, _CHILD.format(backend=backend))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["backends"] == [backend] and report["compiled"] >= 4, report
    check_one_warning(report["warnings"], kind, cache_dir)


def check_one_warning(messages: list[str], kind: str, cache_dir: Path) -> None:
    """`messages` (the warnings a child caught) are one, naming the cache directory and the reason
    of `kind`."""
    reason = os.strerror(UNUSABLE_CACHES[kind])
    assert len(messages) == 1, messages
    assert f"disk cache is off: cannot write to {cache_dir} " in messages[0] and reason in messages[0], messages


def _need(tool: str) -> None:
    if shutil.which(tool) is None:
        import pytest
        pytest.skip(f"{tool} is not installed")


@functools.cache
def _namespaces() -> str:
    """Why this machine gives no user and mount namespace to make a tmpfs in, or ''."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True, text=True)
    return "" if done.returncode == 0 else f"no user and mount namespace: {done.stderr.strip()}"


def _need_namespaces() -> None:
    why = _namespaces()
    if why:
        import pytest
        pytest.skip(why)
