"""The llvm backend's scalar op tables against the op registry: every key is a registry op (a
typo or a renamed op would silently never lower), and the pointwise ops it leaves to NumPy are
the ones listed here (a new pointwise op surfaces as a test to update, not as a silent fallback)."""

from numpile.ops.registry import REGISTRY
from numpile_llvm import scalar

LOWERED = {**scalar.FLOAT, **scalar.INT, **scalar.BOOLEAN, **scalar.SPECIAL}

# pointwise ops the llvm backend runs with NumPy (a kernel holding one runs through the reference
# renderer, said under `perf`), with why
LEFT_TO_NUMPY = {
    "divmod": "two results per element",
    "frexp": "two results per element",
    "modf": "two results per element",
    "gcd": "Euclid's loop per element",
    "lcm": "Euclid's loop per element",
    "ldexp": "mixed float and int operands",
    "spacing": "no LLVM intrinsic; rare",
    "python_int": "Python raises for NaN and inf, which a kernel cannot (nests/pynumbers.py checks it in nests)",
    "python_math": "Python raises outside math's domains, which a kernel cannot (nests/pynumbers.py checks it in nests)",
}


def test_every_table_key_is_a_registry_op():
    keys = set(LOWERED) | set(scalar.PYTHON_INT)   # the loop nests' checked Python int ops too
    assert not keys - set(REGISTRY), sorted(keys - set(REGISTRY))


def test_the_pointwise_ops_left_to_numpy_are_the_listed_ones():
    pointwise = {name for name, op in REGISTRY.items() if op.kind == "pointwise"}
    assert pointwise - set(LOWERED) == set(LEFT_TO_NUMPY)
