"""The triton backend's scalar op tables against the op registry: every key is a registry op (a
typo or a renamed op would silently never lower), and the pointwise ops it leaves to the
lowering's reference renderer (CuPy's functions on the device: on_device.py) are the ones listed
here (a new pointwise op surfaces as a test to update, not as a silent fallback)."""

from numpile.ops.registry import REGISTRY


def lowered() -> dict:
    """The ops the tables render (imported here: without the plugin, conftest.py skips the tests)."""
    from numpile_triton import scalar
    return {**scalar.FLOAT, **scalar.INT, **scalar.BOOLEAN, **scalar.SPECIAL}

# pointwise ops a Triton kernel has no form for, with why
LEFT_TO_REFERENCE = {
    "angle": "of complex values, which Triton kernels do not hold",
    "real": "of complex values, which Triton kernels do not hold",
    "imag": "of complex values, which Triton kernels do not hold",
    "divmod": "two results per element",
    "frexp": "two results per element",
    "modf": "two results per element",
    "gcd": "Euclid's loop per element",
    "lcm": "Euclid's loop per element",
    "ldexp": "mixed float and int operands",
    "logaddexp": "no Triton form yet (rare)",
    "logaddexp2": "no Triton form yet (rare)",
    "nextafter": "no Triton form yet (rare)",
    "spacing": "no Triton form yet (rare)",
    "bitwise_count": "no Triton form yet (rare)",
    "random_bits": "numpile's counter-based generator (ops/draws.py): no Triton form yet",
    "python_int": "Python raises for NaN and inf, which a kernel cannot",
    "python_math": "Python raises outside math's domains, which a kernel cannot",
}


def test_every_table_key_is_a_registry_op():
    assert not set(lowered()) - set(REGISTRY), sorted(set(lowered()) - set(REGISTRY))


def test_the_pointwise_ops_left_to_the_reference_renderer_are_the_listed_ones():
    pointwise = {name for name, op in REGISTRY.items() if op.kind == "pointwise"}
    assert pointwise - set(lowered()) == set(LEFT_TO_REFERENCE)
