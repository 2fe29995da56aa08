"""Kernel shares on libgomp's team (team.py): a split kernel runs all its shares in one native
call where the process has libgomp, with the results of the Python pool and of one thread to
the bit (sums NumPy's); without libgomp, or in a forked child, shares run on the Python pool."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import numpile
from numpile_llvm import team
from numpile_llvm.backend import LLVMBackend

rng = np.random.default_rng()

CROWDED = team.crowded   # before the autouse fixture replaces it
needs_libgomp = pytest.mark.skipif(not team.available(), reason="libgomp is not loadable here")


def compiled(fn, dynamic=False):
    """fn compiled on "llvm", and the CompiledPrograms made for it."""
    made = []

    def compile_llvm(graph, example_inputs):
        made.append(LLVMBackend().compile(graph, example_inputs, {}))
        return made[-1]
    return numpile.compile(fn, backend=compile_llvm, dynamic=dynamic), made


@pytest.fixture(autouse=True)
def uncrowded(monkeypatch):
    """Split kernels run split however busy the machine running the tests is (team.crowded)."""
    monkeypatch.setattr(team, "crowded", lambda: False)
    monkeypatch.setattr(team._USABLE, "value", 1)   # (a split nest's range reads it)


@pytest.fixture
def no_libgomp(monkeypatch):
    """The library lookup finds nothing while the test compiles."""
    team._library.cache_clear()
    monkeypatch.setattr(team, "_candidates", lambda: ["libnumpile-no-such-gomp.so"])
    yield
    monkeypatch.undo()
    team._library.cache_clear()


def axpy(x, y):
    return 2 * x + y


def squared_distance(x, y):
    return ((x - y) ** 2).sum()


def largest(x, y):
    return np.abs(x - y).max()


def dot(x, y):
    return (x * y).sum()


def rows(x, y):   # split over rows: a row's sum on one thread
    return np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1) + y.sum(axis=-1)


def square_and_mask(x, y):   # a 1-d kernel of two stages, the second reading the first's at its own element
    z = x * x + y
    return z, np.abs(z) > 100


CASES = [(axpy, (1 << 20,)), (squared_distance, ((1 << 20) + 5,)), (largest, (3 << 18,)), (dot, (1 << 19,)),
         (rows, (600, 1000)), (square_and_mask, ((1 << 19) + 7,))]


def _inputs(shape, dtype):
    return tuple((rng.standard_normal(shape) * 100).astype(dtype) for _ in range(2))


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w, equal_nan=True)


def _one_thread(fn, args, monkeypatch, dynamic=False):
    with monkeypatch.context() as m:
        m.setattr(team, "threads", lambda: 1)
        f, made = compiled(fn, dynamic)
        result = f(*args)
    assert not any(s.parallel for s in made[0].steps.values())
    return result


@needs_libgomp
@pytest.mark.parametrize("fn, shape", CASES, ids=[fn.__name__ for fn, _ in CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_split_kernels_run_on_the_team_with_one_threads_results(fn, shape, dtype, monkeypatch):
    args = _inputs(shape, dtype)
    f, made = compiled(fn)
    got = f(*args)
    split = [s for s in made[0].steps.values() if s.parallel]
    assert split and all(s.dispatch == "libgomp" and s.team is not None for s in split)
    assert all(".team(" in made[0].ir and "@GOMP_parallel" in made[0].ir for s in split)
    _same(got, _one_thread(fn, args, monkeypatch))
    if fn is not rows:   # exp is within a few ulp of NumPy's; the rest is NumPy's to the bit
        _same(got, fn(*args))


@needs_libgomp
@pytest.mark.parametrize("fn, shape", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_dynamic_shapes_run_on_the_team_at_every_size(fn, shape, monkeypatch):
    f, made = compiled(fn, dynamic=True)
    sizes = [(n,) for n in (1 << 17, 100, (1 << 20) + 3, 3 << 18, 1 << 17)] if len(shape) == 1 \
        else [(600, 1000), (3, 1000), (1000, 300), (129, 2048)]
    for size in sizes:
        args = _inputs(size, np.float64)
        _same(f(*args), _one_thread(fn, args, monkeypatch, dynamic=True))
        if fn is not rows:
            _same(f(*args), fn(*args))
    assert len(made) == 1
    split = [s for s in made[0].steps.values() if s.parallel]
    assert split and all(s.dispatch == "libgomp" for s in split)
    assert any(s.tables for s in split)   # ranges of each extent, made once


@needs_libgomp
@pytest.mark.parametrize("dynamic", [False, True])
def test_stages_reading_each_other_elsewhere_run_on_one_thread(dynamic):
    def reversed_plus_one(x, y):   # the second stage reads the first's elements from the other end
        z = x * x + y
        return z, z[::-1] + 1
    f, made = compiled(reversed_plus_one, dynamic)
    x, y = _inputs(((1 << 19) + 7,), np.float64)
    _same(f(x, y), reversed_plus_one(x, y))
    steps = list(made[0].steps.values())
    assert [(len(s.kp.kernel.stages), s.kp.split) for s in steps] == [(2, "none")]


@needs_libgomp
def test_a_new_layout_gets_a_team_variant():
    f, made = compiled(squared_distance)
    x, y = _inputs(1 << 20, np.float64)
    f(x, y)
    x2 = np.repeat(x, 2)[::2]   # strides the kernel was not compiled for
    _same(f(x2, y), squared_distance(x2, y))
    [step] = made[0].steps.values()
    [(native, entry)] = step.variants.values()
    assert entry is not None


@pytest.mark.parametrize("fn, shape", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_without_libgomp_shares_run_on_the_python_pool(fn, shape, no_libgomp, monkeypatch, capsys):
    args = _inputs(shape, np.float64)
    numpile.set_logs(perf=True)
    try:
        f, made = compiled(fn)
        got = f(*args)
    finally:
        numpile.set_logs()
    assert "llvm: libgomp not found: kernel shares run on a Python thread pool" in capsys.readouterr().err
    split = [s for s in made[0].steps.values() if s.parallel]
    if team.threads() > 1:
        assert split and all(s.dispatch == "python pool" and s.team is None for s in split)
    assert "GOMP_parallel" not in made[0].ir
    _same(got, _one_thread(fn, args, monkeypatch))


@needs_libgomp
def test_python_threads_run_teams_at_once():
    f, _ = compiled(squared_distance)
    g, _ = compiled(axpy)
    data = [_inputs((1 << 19) + t, np.float64) for t in range(6)]
    failures = []

    def work(t, barrier):
        barrier.wait()
        for _ in range(20):
            x, y = data[t]
            if f(x, y) != squared_distance(x, y) or not np.array_equal(g(x, y), axpy(x, y)):
                failures.append(t)

    barrier = threading.Barrier(len(data))
    threads = [threading.Thread(target=work, args=(t, barrier)) for t in range(len(data))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures


CHILD = textwrap.dedent("""
    import os, numpy as np, numpile
    from numpile_llvm import team
    f = numpile.compile(lambda x: ((x - 0.5) ** 2).sum(), backend="llvm")
    x = np.random.default_rng(0).standard_normal(1 << 20)
    assert f(x) == ((x - 0.5) ** 2).sum()          # a team ran: libgomp's pool has threads
    pid = os.fork()
    if pid == 0:
        ok = not team.usable and f(x) == ((x - 0.5) ** 2).sum()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status), "parent", f(x) == ((x - 0.5) ** 2).sum())
""")


@needs_libgomp
def test_a_forked_child_runs_shares_on_the_python_pool():
    # libgomp has no fork handler: a child using the parent's team would wait for ever
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["child", "0", "parent", "True"]


@needs_libgomp
@pytest.mark.parametrize("env", [{}, {"GOMP_SPINCOUNT": "5"}])
def test_the_spin_count_is_set_only_while_libgomp_loads(env):
    script = "import os; from numpile_llvm import team; assert team.available(); print(os.environ.get('GOMP_SPINCOUNT'))"
    clean = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env={**clean, **env})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == env.get("GOMP_SPINCOUNT", "None")   # the user's setting stays, ours does not


@needs_libgomp
@pytest.mark.parametrize("load, env, seen", [(3.0, {}, "300"), (0.1, {}, "None"),
                                              (3.0, {"OMP_WAIT_POLICY": "passive"}, "None")])
def test_a_busy_machine_loads_libgomp_with_a_short_spin(load, env, seen):
    # what GOMP_SPINCOUNT says at the moment libgomp loads, on a machine with that load average
    script = textwrap.dedent(f"""
        import ctypes, os
        os.getloadavg = lambda: ({load}, 0.0, 0.0)
        real = ctypes.CDLL
        def recording(name, *args, **kwargs):
            if "gomp" in str(name) and not kwargs.get("mode", 0) & getattr(os, "RTLD_NOLOAD", 0):
                print(os.environ.get("GOMP_SPINCOUNT"))
            return real(name, *args, **kwargs)
        ctypes.CDLL = recording
        from numpile_llvm import team
        assert team.available()
    """)
    clean = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env={**clean, **env})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[:1] == [seen]


@needs_libgomp
def test_a_smaller_team_runs_every_share():
    # OMP_THREAD_LIMIT=1: libgomp gives a team of one thread, which runs the shares one by one
    script = textwrap.dedent("""
        import numpy as np, numpile
        x = np.random.default_rng(0).standard_normal((1 << 20) + 7)
        f = numpile.compile(lambda a: (a * 3).sum(), backend="llvm")
        g = numpile.compile(lambda a: a * 3 + 1, backend="llvm")
        print(f(x) == (x * 3).sum(), np.array_equal(g(x), x * 3 + 1))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


@needs_libgomp
@pytest.mark.skipif(team.threads() < 2 or not os.path.isdir("/proc/self/task"), reason="one core, or no /proc")
def test_omp_num_threads_does_not_change_the_team():
    # the team size is passed to GOMP_parallel: OMP_NUM_THREADS=1 (set for BLAS, say) leaves it
    script = textwrap.dedent("""
        import os, numpy as np, numpile
        from numpile_llvm import team
        team.crowded = lambda: False   # split however busy the machine is
        x = np.random.default_rng(0).standard_normal(1 << 20)
        f = numpile.compile(lambda a: a * 3 + 1, backend="llvm")
        before = len(os.listdir("/proc/self/task"))
        f(x)
        print(len(os.listdir("/proc/self/task")) - before, team.threads() - 1)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    started, expected = out.stdout.split()
    assert started == expected   # the team's threads beside the caller


@pytest.mark.parametrize("line, threads, crowded", [("0.5 0.4 0.3 2/140 99", 2, False), ("6.1 6.0 5.9 5/140 99", 2, True),
                                                    ("6.1 6.0 5.9 16/900 99", 16, False), ("junk", 2, False)])
def test_a_crowded_run_queue_is_read_from_proc_loadavg(line, threads, crowded, monkeypatch, tmp_path):
    path = tmp_path / "loadavg"
    path.write_text(line)
    monkeypatch.setattr(team, "open", lambda name: open(path), raising=False)
    monkeypatch.setattr(team, "threads", lambda: threads)
    monkeypatch.setattr(team, "_crowding", [float("-inf"), None])
    monkeypatch.setattr(team, "crowded", CROWDED)   # the real one, not the fixture's
    assert team.crowded() is crowded
    assert team._USABLE.value == (0 if crowded else 1)   # split nests' ranges run alone while crowded


@pytest.mark.parametrize("fn, shape", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_a_crowded_machine_runs_split_kernels_whole_with_the_same_results(fn, shape, monkeypatch):
    """With more threads runnable than cores, a team's caller would wait for a thread the
    scheduler set aside: the kernel runs on the calling thread, the same values to the bit."""
    args = _inputs(shape, np.float64)
    f, made = compiled(fn)
    split_result = f(*args)
    calls = []
    monkeypatch.setattr(team, "crowded", lambda: True)
    for step in made[0].steps.values():
        if step.parallel:
            monkeypatch.setattr(step, "_split", lambda *a: calls.append(a) or 1 / 0)
    _same(f(*args), split_result)
    assert not calls
