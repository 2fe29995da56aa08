"""Automatic dynamic shapes and scalars (config.automatic_dynamic_shapes, automatic_dynamic_scalars):
what a new compile of a function leaves unspecialised, learnt from the entries compiled for it
before. A dim of an input whose size differs from what an earlier entry was compiled for becomes
symbolic; a Python float or int whose value differs from an earlier entry's constant becomes a
graph input. What is learnt (a DynamicInputs) grows compile after compile: cache.py's
CompiledFunction keeps it.
"""

from __future__ import annotations

from . import config
from .dynamic import DynamicInputs
from .tracer.guards import same_float
from .tracer.python_scalars import INT_INPUT_BOUND


def dynamic_inputs(dynamic: bool | None, learnt: DynamicInputs, entries: list, frame_env, backend) -> DynamicInputs | None:
    """What this compile leaves unspecialised. Dims: all with dynamic=True; with automatic
    dynamic shapes, every dim of an input whose size differs from what an earlier entry was
    compiled for; none for a backend without dynamic shapes. Python floats and ints: with
    automatic dynamic scalars, those whose value differs from an earlier entry's constant.
    Nothing with dynamic=False. `learnt` grows with what the entries show; `frame_env()` gives
    the names Sources' expressions use, for this call."""
    if dynamic is False:
        return None
    dims = getattr(backend, "supports_dynamic_shapes", False)
    if entries:
        env = frame_env()
        for entry in entries:
            for guard in entry.guards:
                if guard.kind in ("array", "kind_array") and dims and dynamic is None and config.automatic_dynamic_shapes:
                    _note_changed_dims(learnt, guard, env)
                elif guard.kind == "const" and type(guard.expected) in (float, int) and config.automatic_dynamic_scalars:
                    _note_changed_scalar(learnt, guard, env)
    return learnt if dims else DynamicInputs(scalars=learnt.scalars)


def _note_changed_dims(learnt: DynamicInputs, guard, env) -> None:
    try:
        now = eval(guard.source.expr(), dict(env)).shape
    except Exception:
        return
    before = guard.expected[2]
    changed = {i for i, (b, n) in enumerate(zip(before, now)) if b is not None and b != n}
    if len(now) == len(before) and changed:
        learnt.per_source.setdefault(guard.source.name(), set()).update(changed)


def _note_changed_scalar(learnt: DynamicInputs, guard, env) -> None:
    try:
        now = eval(guard.source.expr(), dict(env))
    except Exception:
        return
    before = guard.expected
    if type(now) is not type(before):
        return
    changed = not same_float(now, before) if type(now) is float else \
        now != before and max(abs(now), abs(before)) < INT_INPUT_BOUND
    if changed:
        learnt.scalars.add(guard.source.name())
