"""The local model server's entry: AMX processors load the model without extra buffers."""

from __future__ import annotations

from pathlib import Path

from schemas.settings import Settings
from workers.llama_server import has_amx
from workers.model_server import model_server

FLAGS = "flags\t\t: fpu vme sse sse2 avx avx2 avx512f avx512_vnni {extra}\n"


def test_amx_is_read_from_the_processor_flags(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("model name\t: Xeon\n" + FLAGS.format(extra="amx_bf16 amx_tile amx_int8"))
    assert has_amx(cpuinfo)
    cpuinfo.write_text("model name\t: EPYC\n" + FLAGS.format(extra="sha_ni"))
    assert not has_amx(cpuinfo)
    assert not has_amx(tmp_path / "missing")


def test_the_server_is_started_through_the_safe_entry(tmp_path: Path) -> None:
    command = model_server(Settings(home=tmp_path, provider="local")).command()
    assert command[1:3] == ["-m", "workers.llama_server"]
