"""numpile.disk_cache: private modes, entries of other users ignored with one warning, checksums,
unusable cache directories (one warning, the cache off), and many processes writing the same
entries at once."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from numpile import config, disk_cache
from numpile.testing.faults import UNUSABLE_CACHES, check_one_warning, run_with_unusable_cache

HEADER = b"test-format-1 key\n"
OTHER_UID = 12345

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a file to another user (os.chown) needs root")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    root = tmp_path / "home" / "cache"  # neither level exists yet: numpile makes both
    monkeypatch.setattr(config, "cache_dir", root)
    return root


def mode(path) -> int:
    return path.stat().st_mode & 0o777


def test_round_trip_in_private_directories_and_files(cache_dir):
    disk_cache.write("backend/entry.o", HEADER, b"object code")
    assert disk_cache.read("backend/entry.o", HEADER) == b"object code"
    for made in (cache_dir.parent, cache_dir, cache_dir / "backend"):
        assert mode(made) == 0o700, made
    assert mode(cache_dir / "backend" / "entry.o") == 0o600
    assert os.listdir(cache_dir / "backend") == ["entry.o"]


def test_directories_the_user_made_keep_their_modes(cache_dir):
    cache_dir.mkdir(parents=True)
    cache_dir.chmod(0o755)
    disk_cache.write("backend/entry.o", HEADER, b"object code")
    assert mode(cache_dir) == 0o755 and mode(cache_dir / "backend") == 0o700
    assert disk_cache.read("backend/entry.o", HEADER) == b"object code"


def test_missing_entries_are_misses_without_warnings(cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert disk_cache.read("backend/entry.o", HEADER) is None
        disk_cache.write("backend/other.o", HEADER, b"x")
        assert disk_cache.read("backend/entry.o", HEADER) is None


def test_other_headers_and_bad_checksums_are_ignored(cache_dir, caplog):
    disk_cache.write("backend/entry.o", HEADER, b"object code")
    path = cache_dir / "backend" / "entry.o"
    good = path.read_bytes()
    assert disk_cache.read("backend/entry.o", b"test-format-2 key\n") is None
    for bad in (b"", HEADER, good[:-1], good[:-1] + bytes([good[-1] ^ 1]), good.replace(b"object", b"Object")):
        path.write_bytes(bad)
        with caplog.at_level(logging.DEBUG, logger="numpile.perf"):
            assert disk_cache.read("backend/entry.o", HEADER) is None
        assert f"ignoring the unusable cache file {path}" in caplog.text
        caplog.clear()


def test_files_others_can_write_are_ignored_with_one_warning(cache_dir):
    disk_cache.write("backend/entry.o", HEADER, b"object code")
    path = cache_dir / "backend" / "entry.o"
    path.chmod(0o620)
    with pytest.warns(UserWarning, match=f"ignores {path}: group or others can write it"):
        assert disk_cache.read("backend/entry.o", HEADER) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second time says nothing
        assert disk_cache.read("backend/entry.o", HEADER) is None


@needs_root
def test_files_of_another_user_are_ignored_with_one_warning(cache_dir):
    disk_cache.write("backend/entry.o", HEADER, b"object code")
    path = cache_dir / "backend" / "entry.o"
    os.chown(path, OTHER_UID, -1)
    with pytest.warns(UserWarning, match=f"ignores {path}: it is owned by uid {OTHER_UID}, not by this user"):
        assert disk_cache.read("backend/entry.o", HEADER) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert disk_cache.read("backend/entry.o", HEADER) is None
    disk_cache.write("backend/entry.o", HEADER, b"object code")  # our directory: our entry replaces it
    assert disk_cache.read("backend/entry.o", HEADER) == b"object code"


@needs_root
@pytest.mark.parametrize("level", ["", "backend"])
def test_directories_of_another_user_are_neither_read_nor_written(cache_dir, level):
    disk_cache.write("backend/entry.o", HEADER, b"object code")
    foreign = cache_dir / level
    os.chown(foreign, OTHER_UID, -1)
    with pytest.warns(UserWarning, match=f"ignores {foreign}: it is owned by uid {OTHER_UID}"):
        assert disk_cache.read("backend/entry.o", HEADER) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        disk_cache.write("backend/new.o", HEADER, b"object code")
    assert sorted(p.name for p in cache_dir.rglob("*")) == ["backend", "entry.o"]


FULL_DISK = textwrap.dedent("""
    import resource, signal, warnings
    from numpile import disk_cache
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        disk_cache.write("backend/entry.o", b"header\\n", bytes(1 << 20))
    assert disk_cache.read("backend/entry.o", b"header\\n") is None
    print(*[w.message for w in caught], sep="\\n")
""")


@pytest.mark.skipif(sys.platform == "win32", reason="file size limits are POSIX")
def test_a_file_too_large_for_the_disk_costs_one_warning_and_leaves_nothing(tmp_path):
    env = {**os.environ, "NUMPILE_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", FULL_DISK], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"numpile's disk cache is off: cannot write to {tmp_path} ([Errno 27] File too large")
    assert os.listdir(tmp_path / "backend") == []


UNUSABLE = textwrap.dedent("""
    import json, os, warnings
    from numpile import disk_cache
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):   # every way into the cache: entries, a source file, a directory
            disk_cache.write(f"backend/{i}.o", b"header\\n", b"object code" * 1000)
            assert disk_cache.read(f"backend/{i}.o", b"header\\n") is None
            source = disk_cache.source_file(f"kernels/k{i}.py", "x = 1\\n" * 1000)
            assert source.read_text() == "x = 1\\n" * 1000
            tool = disk_cache.directory("tool")
            (tool / f"{i}.bin").write_bytes(b"tool's own")
    print(json.dumps([str(w.message) for w in caught]))
""")


@pytest.mark.parametrize("kind", UNUSABLE_CACHES)
def test_an_unusable_cache_directory_costs_one_warning_naming_it_and_why(kind, tmp_path):
    cache_dir, done = run_with_unusable_cache(kind, tmp_path, UNUSABLE)
    assert done.returncode == 0, done.stderr
    check_one_warning(json.loads(done.stdout), kind, cache_dir)


WRITER = textwrap.dedent("""
    import hashlib, sys
    from numpile import disk_cache

    def payload(key, writer, round):  # 256 KiB, more than one write() call puts down
        tag = f"{key} {writer} {round}".encode()
        return tag + b"\\n" + hashlib.sha256(tag).digest() * 8192

    writer = sys.argv[1]
    for round in range(20):
        for key in ("a", "b", "c"):
            disk_cache.write(f"backend/{key}.o", key.encode() + b"\\n", payload(key, writer, round))
            got = disk_cache.read(f"backend/{key}.o", key.encode() + b"\\n")
            assert got is not None, f"{key}: no whole entry after writing one"
            k, w, r = got.split(b"\\n")[0].decode().split()
            assert k == key and got == payload(k, w, r), f"{key}: mixed or foreign bytes"
""")


def test_processes_writing_the_same_entries_at_once_all_read_whole_entries(tmp_path, monkeypatch):
    env = {**os.environ, "NUMPILE_CACHE_DIR": str(tmp_path)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(i)], env=env, stderr=subprocess.PIPE, text=True)
               for i in range(8)]
    for w in writers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    assert sorted(os.listdir(tmp_path / "backend")) == ["a.o", "b.o", "c.o"]  # no temporary files left
    monkeypatch.setattr(config, "cache_dir", tmp_path)
    for key in ("a", "b", "c"):
        assert disk_cache.read(f"backend/{key}.o", key.encode() + b"\n").startswith(f"{key} ".encode())
