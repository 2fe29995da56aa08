"""What a benchmark ran on, for the head of its table: results differ by CPU, and tables say which."""

from __future__ import annotations

import os
import platform


def cpu_name() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), and how many cores this process may use."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            name = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), name)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{name}, {cores} core{'s' if cores != 1 else ''}"
