"""Runs of small kernels as one native call.

A graph of small arrays (a few time steps of a stencil on 12 elements, scalar updates of a state
vector) lowers to many kernels that each do little; called one by one through ctypes, the calls
cost more than the work. Consecutive kernels that run whole on one thread with static sizes are
therefore called from one native function, a *chain*, which calls each in order and stops at the
first that returns a status: it returns that status with the kernel's position in the chain in
the bits above (`status | position << 8`). The runner then goes on from there as it would have
without the chain: that kernel's relayout, then the rest one by one.
"""

from __future__ import annotations

from ..irbuilder import Module

POSITION_SHIFT = 8   # a kernel's statuses fit below (codegen: bits 0-1)


def runs(steps: list, chainable) -> list[list[int]]:
    """The maximal runs (step indices, two or more) of consecutive steps for which chainable(step)."""
    found, current = [], []
    for i, step in enumerate(steps):
        if chainable(step):
            current.append(i)
            continue
        if len(current) > 1:
            found.append(current)
        current = []
    return found + ([current] if len(current) > 1 else [])


def render(module: Module, name: str, calls: list[tuple[str, list[str], int]]) -> list[str]:
    """The chain `name` calling each (kernel symbol, its array arguments, its extent) in order;
    returns the chain's own arguments, the distinct array arguments in order of first use."""
    params: list[str] = []
    for _, arrays, _ in calls:
        params += [a for a in arrays if a not in params]
    lines = ["entry:"]
    for position, (symbol, arrays, extent) in enumerate(calls):
        args = ", ".join([f"ptr %c{params.index(a)}" for a in arrays] + ["i64 0", f"i64 {extent}", "i64 -1"])
        lines += [f"  %s{position} = call i32 @{symbol}({args})",
                  f"  %failed{position} = icmp ne i32 %s{position}, 0",
                  f"  br i1 %failed{position}, label %stop{position}, label %go{position}",
                  f"stop{position}:",
                  f"  %r{position} = or i32 %s{position}, {position << POSITION_SHIFT}",
                  f"  ret i32 %r{position}",
                  f"go{position}:"]
    lines.append("  ret i32 0")
    signature = ", ".join(f"ptr %c{k}" for k in range(len(params)))
    module.functions.append(f"define i32 @{name}({signature}) {module.attribute_group('nounwind')} {{\n"
                            + "\n".join(lines) + "\n}\n")
    return params


def runner_lines(chain: str, params: list[str], kernel_lines: list[tuple[str, str]]) -> list[str]:
    """The runner's lines for a chain: one call, and where a kernel stopped it, that kernel's
    relayout and the kernels after it one by one. `kernel_lines`: per kernel, (its relayout call,
    its one-by-one statement `if kernel(...): relayout(...)`)."""
    lines = [f"    status = {chain}({', '.join(params)})", "    if status:", f"        at = status >> {POSITION_SHIFT}"]
    for position, (relayout, alone) in enumerate(kernel_lines):
        lines.append(f"        if at == {position}: {relayout}")
        if position:
            lines += [f"        elif at < {position}:", f"            {alone}"]
    return lines
