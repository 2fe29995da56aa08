#!/usr/bin/env bash
# The triton plugin's tests on a real GPU (no interpreter), for the lent H100/H200 box: no internet
# there, torch, triton, CuPy and pytest-xdist preinstalled. Run from the repository root:
#     bash plugins/inductor_triton/tests/run_on_gpu.sh [pytest arguments]
# Runs everything, then exits 1 if anything failed. NUMPILE_GPU_WORKERS (8) pytest processes;
# NUMPILE_FUZZ_MINUTES (1) of numpile.fuzz on NumPy arguments, NUMPILE_CUPY_FUZZ_MINUTES (2) of
# cupy_fuzz.py (CuPy arguments in every layout).
set -uo pipefail
cd "$(dirname "$0")/../../.."
python3 -m pip install -q --no-deps --no-build-isolation --no-index \
    -e . -e plugins/cpu_llvm -e plugins/debug_print -e plugins/inductor_triton || exit 1
python3 - <<'PY'
import torch, triton, cupy
print(f"torch {torch.__version__}, triton {triton.__version__}, CuPy {cupy.__version__}, device {torch.cuda.get_device_name()}")
PY
export NUMPILE_TRITON_GPU=1 TRITON_INTERPRET=0 PYTHONUNBUFFERED=1
failed=()
# the plugin's own tests and the shared conformance suite (on NumPy and on CuPy arguments)
python3 -m pytest plugins/inductor_triton/tests -q -p no:cacheprovider -n "${NUMPILE_GPU_WORKERS:-8}" "$@" \
    || failed+=(pytest)
# the random programs of numpile.fuzz on "triton", NumPy arguments
python3 -m numpile.fuzz --backend triton --minutes "${NUMPILE_FUZZ_MINUTES:-1}" || failed+=(fuzz)
# the same programs on CuPy arguments in every layout, against NumPy and CuPy eager
python3 plugins/inductor_triton/tests/cupy_fuzz.py --minutes "${NUMPILE_CUPY_FUZZ_MINUTES:-2}" || failed+=(cupy_fuzz)
if ((${#failed[@]})); then
    echo "run_on_gpu.sh: failed: ${failed[*]}"
    exit 1
fi
echo "run_on_gpu.sh: all passed"
