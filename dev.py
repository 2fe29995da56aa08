"""Set up a development environment and run numpile in it.

    python3 dev.py demo                 # .venv with core + every plugin (editable), then `numpile demo`
    python3 dev.py test [-- PYTEST_ARGS] # the same set-up, then the whole test suite
    python3 dev.py test --python python3.12 --venv .venv-3.12 -- tests/
    python3 dev.py dist [--out dist]    # an sdist and a wheel of every distribution, checked by twine

Only the Python standard library is used here, so this runs on a bare machine.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def distributions() -> list[Path]:
    """The core first, then every plugin distribution under plugins/."""
    return [ROOT] + sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))


# Built by `dev.py dist` besides the core and the plugins: the third-party template, as its authors build it.
TEMPLATE = ROOT / "examples" / "third_party_backend"


def built_distributions() -> list[Path]:
    """What `dev.py dist` builds: every distribution of the repository, the template last."""
    return distributions() + [TEMPLATE]


def build_dists(py: Path, out: Path) -> list[Path]:
    """`python -m build` (isolated, as pip builds) of every distribution into `out`, then
    `twine check --strict` of everything built; returns the files."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    for d in built_distributions():
        subprocess.run([str(py), "-m", "build", "--outdir", str(out), str(d)], check=True, stdout=subprocess.DEVNULL)
    built = sorted(set(out.iterdir()) - before)
    subprocess.run([str(py), "-m", "twine", "check", "--strict", *map(str, built)], check=True)
    return built


def venv_python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def setup(env: Path, python: str) -> Path:
    """Create the virtual environment and install everything editable; skipped when nothing changed."""
    dists = distributions()
    stamp_text = "\n".join(f"{d}:{hashlib.sha256((d / 'pyproject.toml').read_bytes()).hexdigest()}" for d in dists)
    stamp = env / ".numpile-installed"
    py = venv_python(env)
    if py.exists() and stamp.exists() and stamp.read_text() == stamp_text:
        return py
    if not py.exists():
        if python == sys.executable:
            venv.EnvBuilder(with_pip=True, clear=True).create(env)
        else:
            subprocess.run([python, "-m", "venv", "--clear", str(env)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    plugins = dists[1:]
    if TRITON_PLUGIN in plugins and not install_torch_cpu(py):
        plugins.remove(TRITON_PLUGIN)
    targets = ["-e", f"{ROOT}[test,docs]"]
    for d in plugins:
        targets += ["-e", str(d)]
    subprocess.run([str(py), "-m", "pip", "install", "-q", *targets], check=True)
    stamp.write_text(stamp_text)
    return py


# The triton plugin depends on torch (Triton's runtime). Its CPU build goes in first, so that pip
# never pulls the CUDA build (gigabytes) for the plugin: without a GPU the plugin's tests run
# through Triton's interpreter on torch CPU tensors.
TRITON_PLUGIN = ROOT / "plugins" / "inductor_triton"
TORCH_CPU = ["torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"]


def install_torch_cpu(py: Path) -> bool:
    """Install torch's CPU wheel; False (and why) when none is to be had for this Python."""
    found = subprocess.run([str(py), "-m", "pip", "install", "-q", "--retries", "1", *TORCH_CPU])
    if found.returncode:
        print(f"dev.py: no CPU build of {TORCH_CPU[0]} for {py}: numpile-triton is not installed in this "
              f"environment and its tests are skipped", file=sys.stderr)
    return found.returncode == 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["setup", "demo", "test", "dist"])
    parser.add_argument("--python", default=sys.executable, help="interpreter for the environment")
    parser.add_argument("--venv", default=str(ROOT / ".venv"), help="where the environment lives")
    parser.add_argument("--out", default=str(ROOT / "dist"), help="where `dist` writes the sdists and wheels")
    argv = sys.argv[1:] if argv is None else list(argv)
    rest = argv[argv.index("--") + 1:] if "--" in argv else []  # arguments for pytest or the demo
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    py = setup(Path(args.venv).resolve(), args.python)
    if args.command == "demo":
        return subprocess.run([str(py), "-m", "numpile", "demo", *rest]).returncode
    if args.command == "test":
        return subprocess.run([str(py), "-m", "pytest", *rest], cwd=ROOT).returncode
    if args.command == "dist":
        for path in build_dists(py, Path(args.out).resolve()):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
