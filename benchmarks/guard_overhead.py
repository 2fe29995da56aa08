"""Guard-hit overhead: a compiled `lambda x, y: x + y` against the plain function on small arrays.

    python benchmarks/guard_overhead.py

Both run in this process, interleaved, on the backends "eager" (the graph run by NumPy: the cost
of a hit alone) and "llvm" (its compiled kernel); the table shows medians over repeats and the
difference, which is what a cache hit costs (guard check, dispatch, output rebuild). The safety
net is off: the compiled entry runs on every call.
"""

from __future__ import annotations

import platform
import statistics
import timeit

import numpy as np
from host import cpu_name

import numpile


def median_us(fn, args, number=20000, repeat=15) -> float:
    times = timeit.repeat(lambda: fn(*args), number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def main() -> None:
    plain = lambda x, y: x + y  # noqa: E731
    numpile.config.safety_net = False
    print(f"numpile {numpile.__version__}, NumPy {np.__version__}, Python {platform.python_version()}; {cpu_name()}")
    print(f"{'backend':>8} {'size':>6} {'numpy µs':>9} {'numpile µs':>11} {'overhead µs':>12} {'ratio':>6}")
    for backend in ("eager", "llvm"):
        compiled = numpile.compile(plain, backend=backend)
        for size in (1, 12, 256):
            x, y = np.random.rand(size), np.random.rand(size)
            compiled(x, y)  # compile once, outside the timing
            eager, jit = [], []
            for _ in range(3):  # interleave so that drift hits both alike
                eager.append(median_us(plain, (x, y)))
                jit.append(median_us(compiled, (x, y)))
            e, j = statistics.median(eager), statistics.median(jit)
            print(f"{backend:>8} {size:>6} {e:>9.2f} {j:>11.2f} {j - e:>12.2f} {j / e:>6.2f}")


if __name__ == "__main__":
    main()
