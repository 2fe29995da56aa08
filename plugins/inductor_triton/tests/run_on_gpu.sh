#!/usr/bin/env bash
# The triton plugin's tests on a real GPU (no interpreter), for the lent H100 box: no internet
# there, torch, triton and CuPy preinstalled. Run from the repository root:
#     bash plugins/inductor_triton/tests/run_on_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
python3 -m pip install -q --no-deps --no-build-isolation --no-index \
    -e . -e plugins/cpu_llvm -e plugins/debug_print -e plugins/inductor_triton
python3 - <<'PY'
import torch, triton
print(f"torch {torch.__version__}, triton {triton.__version__}, device {torch.cuda.get_device_name()}")
PY
export NUMPILE_TRITON_GPU=1 TRITON_INTERPRET=0
# the plugin's own tests and the shared conformance suite, compiled for the GPU
python3 -m pytest plugins/inductor_triton/tests -q -p no:cacheprovider "$@"
# the random programs of numpile.fuzz on "triton", for a minute
python3 -m numpile.fuzz --backend triton --minutes 1
