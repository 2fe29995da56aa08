"""NPBench's NumPy programs, used as written (issue 32): numpile and Numba against NumPy.

    python benchmarks/npbench.py --root DIR [--size S|M|L|paper] [--only NAME ...] [--no-numba]

NPBench (github.com/spcl/npbench, BSD 3-clause licence; 54 NumPy programs: PolyBench's kernels,
stencils, deep-learning layers, physics, FFTs) is not part of this repository: check it out anywhere
and give its folder as --root. Each program's `bench_info/<name>.json` names its module, its
`initialize` and its parameters per size; the data is made as NPBench makes it, then the
`<module>_numpy.py` kernel runs unmodified: plain (NumPy), wrapped by numpile and by
`numba.njit`, on fresh copies of the arguments each call, results and updated arguments compared
with NumPy's (benchmarks/external.py's runner, whose table this prints); where they differ past the
runner's tolerance, NPBench's own validation of that program decides (npbench_check).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

import external


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel(root: Path, info: dict, size: str) -> external.Kernel:
    """The program's kernel and arguments for `size`, made as NPBench's benchmark.get_data does."""
    folder = root / "npbench" / "benchmarks" / info["relative_path"]
    data = dict(info["parameters"][size])
    init = info.get("init")
    if init:
        made = getattr(load_module(folder / f"{info['module_name']}.py", f"npbench_{info['short_name']}_data"),
                       init["func_name"])(*(data[a] for a in init["input_args"]))
        data.update(zip(init["output_args"], made if len(init["output_args"]) > 1 else (made,)))
    module = load_module(folder / f"{info['module_name']}_numpy.py", f"npbench_{info['short_name']}")
    return external.Kernel(info["short_name"], getattr(module, info["func_name"]), tuple(data[a] for a in info["input_args"]),
                           npbench_check(info))


def npbench_check(info: dict):
    """The runner's check, and where it finds a difference, NPBench's own rule for the program: its
    validate (np.allclose at the bench_info's rtol, else a relative error of the norm under its
    norm_error), for the results and the arguments the program updates. Where NPBench declares
    a program chaotic (a norm_error of 1e-3 or more: nbody's orbits, 0.1, whose ulps of libm
    grow over the steps; the escape-time fractals), it validates the results alone, as NPBench does."""
    close, norm_error = validates(info), info.get("norm_error", 1e-5)

    def check(got, want):
        strict = external.runner.mismatch(got, want)
        (results, arguments), (expected, before) = got, want
        values = list(results) if isinstance(expected, (tuple, list)) else [results]
        wanted = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        if strict is None or len(values) != len(wanted):
            return strict
        if norm_error < 1e-3:
            values, wanted = values + list(arguments), wanted + list(before)
        return None if all(map(close, values, wanted)) else strict
    return check


def validates(info: dict):
    """NPBench's validate for one value of the program: np.allclose at the bench_info's rtol and
    atol, else a relative error of the norm under its norm_error (non-float values: the runner's
    exact rule)."""
    rtol, atol, norm_error = info.get("rtol", 1e-5), info.get("atol", 1e-8), info.get("norm_error", 1e-5)

    def close(g, w) -> bool:
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype.kind not in "fc":
            return external.runner.mismatch(g, w) is None
        return np.allclose(w, g, rtol=rtol, atol=atol) or np.linalg.norm(w - g) / np.linalg.norm(w) < norm_error
    return close


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, required=True, help="a checkout of github.com/spcl/npbench")
    parser.add_argument("--size", default="S", help="NPBench's size preset (S, M, L, paper)")
    args = external.arguments(parser).parse_args(argv)
    infos = [json.loads(p.read_text())["benchmark"] for p in sorted((args.root / "bench_info").glob("*.json"))]
    sys.path.insert(0, str(args.root))   # a few programs import their package's helpers
    external.run_all(f"NPBench ({args.root}), size {args.size}",
                     [(i["short_name"], lambda i=i: kernel(args.root, i, args.size)) for i in infos], args)


if __name__ == "__main__":
    main()
