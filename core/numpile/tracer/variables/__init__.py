"""What the tracer knows about a value: a Variable, one class per kind of value, one module per
family. A Variable answers what an instruction means for it (see base.Variable); the modules
import one another bottom up only: base < functions < objects < ranges < containers < arrays
< contexts < builtins < calls, with iterators (positional ones: rows, enumerate, zip, ndindex)
below arrays."""

from .arrays import ArrayMethodVariable, ArrayVariable, base_array
from .base import CONSTANT_TYPES, NULL, IteratorVariable, NullVariable, Variable
from .calls import call_known, is_library_code
from .containers import DictVariable, ListVariable, SliceVariable, TupleVariable, constant_result, make_slice
from .contexts import ContextExitVariable, ErrstateVariable
from .functions import BoundMethodVariable, CellVariable, NestedFunctionVariable
from .iterators import ArrayIteratorVariable, PositionalIterator
from .objects import ConstantVariable, DynamicIntVariable, ObjectVariable
from .ranges import DataRange, RangeIteratorVariable, SymbolicRange

__all__ = [
    "base_array",
    "ArrayIteratorVariable", "ArrayMethodVariable", "ArrayVariable", "BoundMethodVariable", "CONSTANT_TYPES",
    "CellVariable", "ConstantVariable", "ContextExitVariable", "DictVariable", "DynamicIntVariable", "ErrstateVariable",
    "IteratorVariable", "ListVariable", "NULL", "NestedFunctionVariable", "NullVariable", "ObjectVariable",
    "PositionalIterator",
    "DataRange", "RangeIteratorVariable", "SliceVariable", "SymbolicRange", "TupleVariable", "Variable", "call_known",
    "constant_result", "is_library_code", "make_slice",
]
