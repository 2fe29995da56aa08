"""Which handler runs each opcode (DISPATCH, filled by handlers.py and flow_handlers.py as they register them) and the
opcodes that graph-break, with the reason users see (BREAKS). The translator reads both and
imports no handler; tests/test_opcodes.py checks that every opcode of the running CPython is in
one of them."""

from __future__ import annotations

DISPATCH: dict = {}


def handles(*names):
    """Register the decorated function as the handler of opcodes `names`."""
    def register(fn):
        for name in names:
            DISPATCH[name] = fn
        return fn
    return register


_BREAK_FAMILIES = {
    "raising or handling an exception (raise, try/except, with's exit on an error, a failed assert)": (
        "RAISE_VARARGS", "RERAISE", "PUSH_EXC_INFO", "POP_EXCEPT", "CHECK_EXC_MATCH", "CHECK_EG_MATCH",
        "PREP_RERAISE_STAR", "WITH_EXCEPT_START", "LOAD_ASSERTION_ERROR", "CLEANUP_THROW"),
    "async code (await, async for, async with)": (
        "BEFORE_ASYNC_WITH", "END_ASYNC_FOR", "GET_AITER", "GET_ANEXT", "GET_AWAITABLE", "ASYNC_GEN_WRAP"),
    "delegating to a generator (yield from)": ("GET_YIELD_FROM_ITER", "SEND", "END_SEND"),
    "a match statement": ("MATCH_CLASS", "MATCH_KEYS", "MATCH_MAPPING", "MATCH_SEQUENCE", "GET_LEN"),
    "sets ({...}, set comprehensions)": ("BUILD_SET", "SET_ADD", "SET_UPDATE"),
    "del of an attribute, an item, a global or a closure variable": (
        "DELETE_ATTR", "DELETE_SUBSCR", "DELETE_GLOBAL", "DELETE_DEREF", "DELETE_NAME"),
    "super()": ("LOAD_SUPER_ATTR", "LOAD_SUPER_METHOD", "LOAD_ZERO_SUPER_ATTR", "LOAD_ZERO_SUPER_METHOD"),
    "defining a class, or a generic function or type (PEP 695)": ("LOAD_BUILD_CLASS", "CALL_INTRINSIC_2"),
    "code of a module or class body (from m import *, names looked up there)": (
        "LOAD_NAME", "STORE_NAME", "IMPORT_STAR", "SETUP_ANNOTATIONS", "LOAD_LOCALS", "LOAD_CLASSDEREF",
        "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FROM_DICT_OR_DEREF", "PRINT_EXPR"),
    # never met in the code the tracer reads: dis shows instrumented code uninstrumented, and the
    # others are the compiler's pseudo-instructions or the interpreter's own
    "an instruction of CPython's internals": (
        "ENTER_EXECUTOR", "EXIT_INIT_CHECK", "INTERPRETER_EXIT", "RESERVED", "POP_BLOCK", "SETUP_CLEANUP",
        "SETUP_FINALLY", "SETUP_WITH", "STORE_FAST_MAYBE_NULL", "INSTRUMENTED_CALL", "INSTRUMENTED_CALL_KW",
        "INSTRUMENTED_CALL_FUNCTION_EX", "INSTRUMENTED_END_FOR", "INSTRUMENTED_END_SEND", "INSTRUMENTED_FOR_ITER",
        "INSTRUMENTED_INSTRUCTION", "INSTRUMENTED_JUMP_BACKWARD", "INSTRUMENTED_JUMP_FORWARD", "INSTRUMENTED_LINE",
        "INSTRUMENTED_LOAD_SUPER_ATTR", "INSTRUMENTED_POP_JUMP_IF_FALSE", "INSTRUMENTED_POP_JUMP_IF_NONE",
        "INSTRUMENTED_POP_JUMP_IF_NOT_NONE", "INSTRUMENTED_POP_JUMP_IF_TRUE", "INSTRUMENTED_RESUME",
        "INSTRUMENTED_RETURN_CONST", "INSTRUMENTED_RETURN_VALUE", "INSTRUMENTED_YIELD_VALUE"),
}
BREAKS = {op: f"{reason} is not supported yet ({op})" for reason, ops in _BREAK_FAMILIES.items() for op in ops}
