"""The local model server's thread count is a setting, left to llama.cpp unless set."""

from __future__ import annotations

from pathlib import Path

from schemas.settings import Settings
from workers.model_server import model_server

GGUF = Path("model.gguf")


def test_threads_are_llama_cpps_own_unless_set(tmp_path: Path) -> None:
    command = model_server(Settings(home=tmp_path, local_model_path=GGUF)).command()
    assert "--n_threads" not in command and "--n_threads_batch" not in command


def test_a_thread_count_sets_prompt_reading_and_generation_alike(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, local_model_path=GGUF, local_model_threads=2)
    command = model_server(settings).command()
    assert command[command.index("--n_threads") + 1] == "2"
    assert command[command.index("--n_threads_batch") + 1] == "2"
