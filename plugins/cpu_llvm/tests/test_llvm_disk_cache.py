"""The llvm backend's object code on disk (numpile.disk_cache): a second process compiles nothing,
bad files are rebuilt, the cache is private to the user, processes compiling at once share it,
and a cache directory that cannot be used costs one warning, never the compile."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from numpile.testing.faults import UNUSABLE_CACHES, check_backend_with_unusable_cache

CACHE_SCRIPT = textwrap.dedent("""
    import logging, numpy as np, numpile
    logging.basicConfig(level=logging.DEBUG, format="%(message)s")
    numpile.set_logs(perf=True)
    x = np.arange(1000, dtype=np.float64)
    got = numpile.compile(lambda a: np.sqrt(a) * 2 - 1, backend="llvm")(x)
    assert np.allclose(got, np.sqrt(x) * 2 - 1)
""")


def _run_cached(cache_dir) -> str:
    env = {**os.environ, "NUMPILE_CACHE_DIR": str(cache_dir)}
    done = subprocess.run([sys.executable, "-c", CACHE_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr + done.stdout


def test_second_process_compiles_nothing_and_bad_cache_files_are_rebuilt(tmp_path):
    assert "compiled in" in _run_cached(tmp_path)
    assert "object code: disk cache" in _run_cached(tmp_path)
    (obj,) = (tmp_path / "llvm").glob("*.o")
    for garbage in (b"", b"not an object file", obj.read_bytes()[:100], obj.read_bytes()[:-5] + b"xxxxx"):
        obj.write_bytes(garbage)
        out = _run_cached(tmp_path)
        assert "compiled in" in out and "ignoring the unusable cache file" in out
    assert "object code: disk cache" in _run_cached(tmp_path)


def test_cached_objects_are_private_to_the_user(tmp_path):
    assert "compiled in" in _run_cached(tmp_path / "cache")
    (obj,) = (tmp_path / "cache" / "llvm").glob("*.o")
    assert [p.stat().st_mode & 0o777 for p in (tmp_path / "cache", obj.parent, obj)] == [0o700, 0o700, 0o600]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="os.chown to another user needs root")
def test_objects_another_user_wrote_are_never_loaded(tmp_path):
    _run_cached(tmp_path)
    (obj,) = (tmp_path / "llvm").glob("*.o")
    os.chown(obj, 12345, -1)
    out = _run_cached(tmp_path)
    assert "compiled in" in out and f"ignores {obj}: it is owned by uid 12345" in out
    assert "object code: disk cache" in _run_cached(tmp_path)  # the rebuilt object is this user's


def test_processes_compiling_at_once_share_the_cache(tmp_path):
    env = {**os.environ, "NUMPILE_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.Popen([sys.executable, "-c", CACHE_SCRIPT], env=env, stderr=subprocess.PIPE, text=True)
            for _ in range(6)]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    assert len(os.listdir(tmp_path / "llvm")) == 1  # one object, no temporary files left
    assert "object code: disk cache" in _run_cached(tmp_path)


@pytest.mark.parametrize("kind", UNUSABLE_CACHES)
def test_an_unusable_cache_directory_costs_one_warning_not_the_compile(kind, tmp_path):
    check_backend_with_unusable_cache("llvm", kind, tmp_path)
