"""``python -m workers.llama_server ARGS``: llama-cpp-python's server, safe on AMX processors.

llama.cpp, built for the machine it is installed on, repacks a quantised model's weights into
an AMX buffer where the processor has AMX (Sapphire Rapids and later Xeons), and its AMX
matrix multiply crashes the server (SIGSEGV) on the first completion; measured here with the
built-in SmolLM2 on such a machine, and reported upstream (llama.cpp "segfault in
ggml_backend_amx_mul_mat"). Where the processor has AMX, the server loads the model without
extra buffer types (``use_extra_bufts``), so the weights stay in plain CPU buffers. llama-cpp-
python exposes no option for it, so the model's default parameters are wrapped before its
server module runs; everything else, arguments included, is the stock server.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")


def has_amx(cpuinfo: Path = CPUINFO) -> bool:
    """Whether the processor reports AMX (``amx_int8`` or ``amx_tile`` among its flags)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return bool(flags & {"amx_int8", "amx_tile"})
    return False


def without_extra_buffers() -> None:
    """Make every model load with ``use_extra_bufts`` off (no AMX or repacked weights)."""
    import llama_cpp.llama_cpp as bindings

    default = bindings.llama_model_default_params

    def params() -> Any:
        found = default()
        found.use_extra_bufts = False
        return found

    bindings.llama_model_default_params = params


def main() -> None:
    """Run llama-cpp-python's server with this process's arguments."""
    if has_amx():
        without_extra_buffers()
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
