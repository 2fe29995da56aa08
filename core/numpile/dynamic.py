"""What a trace leaves unspecialised (automatic_dynamic.py decides it between compiles, the tracer reads
it)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DynamicInputs:
    """What a trace leaves unspecialised: input dimensions made symbolic ("all", or per source name
    a set of dims), and the sources of Python floats and ints that become graph inputs instead of
    constants."""

    all: bool = False
    per_source: dict = field(default_factory=dict)
    scalars: set = field(default_factory=set)
    loops: bool = False   # the backend runs loop nodes (tracer/control/state.py: what is captured as one)
    conditionals: bool = False   # the backend runs cond and while_loop nodes too

    def wants(self, source_name: str, dim: int, size: int) -> bool:
        if size in (0, 1):  # 0 and 1 change broadcasting and emptiness: always specialised
            return False
        return self.all or dim in self.per_source.get(source_name, ())
