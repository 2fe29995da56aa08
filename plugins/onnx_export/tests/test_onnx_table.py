"""The op mapping is one table keyed by registry op names: every op of the registry is mapped
or declared unsupported with its reason, and nothing else is."""

from numpile import ops
from numpile_onnx.table import TABLE, UNSUPPORTED


def test_every_registry_op_is_mapped_or_declared_unsupported():
    registry = set(ops.REGISTRY)
    assert not set(TABLE) - registry, f"rows for ops the registry lacks: {sorted(set(TABLE) - registry)}"
    assert not set(UNSUPPORTED) - registry, f"reasons for unknown ops: {sorted(set(UNSUPPORTED) - registry)}"
    assert not set(TABLE) & set(UNSUPPORTED), f"both mapped and unsupported: {sorted(set(TABLE) & set(UNSUPPORTED))}"
    missing = registry - set(TABLE) - set(UNSUPPORTED)
    assert not missing, f"registry ops with no row and no reason: {sorted(missing)}"


def test_unsupported_ops_say_why():
    driver = {ops.TUPLE_GETITEM, "loop"}   # converted by the driver itself
    assert all(UNSUPPORTED[op] for op in set(UNSUPPORTED) - driver)
