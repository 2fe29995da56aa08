"""Captured control flow: `for`, `while` and `if` kept as loop, while_loop and cond nodes."""
