"""Any GGUF file gets its chat format from its own metadata, read without loading the model."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from workers.gguf import GGUFError, string_metadata
from workers.model_server import ModelServer, chat_format_for, default_model_path

GEMMA = "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{% endfor %}"
LLAMA3 = "{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>{% endfor %}"
PHI3 = "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf(path: Path, strings: dict[str, str], *, vocabulary: int = 3000) -> Path:
    """A GGUF header as llama.cpp writes one: counts, a vocabulary array, then string values."""
    pairs = [
        _string("general.alignment") + struct.pack("<II", 4, 32),
        _string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, vocabulary)
        + b"".join(_string(f"tok{i}") for i in range(vocabulary)),
        _string("tokenizer.ggml.scores")
        + struct.pack("<IIQ", 9, 6, vocabulary)
        + b"\0" * 4 * vocabulary,
        *(_string(key) + struct.pack("<I", 8) + _string(value) for key, value in strings.items()),
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs))
    path.write_bytes(header + b"".join(pairs))
    return path


@pytest.mark.parametrize(
    "template,expected",
    [(GEMMA, "gemma"), (LLAMA3, "llama-3"), ("<|im_start|>{{ m }}<|im_end|>", "chatml")],
    ids=["gemma", "llama-3", "chatml"],
)
def test_a_template_of_a_family_llama_cpp_knows_gets_that_format(
    tmp_path: Path, template: str, expected: str
) -> None:
    model = gguf(tmp_path / "some-model.gguf", {"tokenizer.chat_template": template})

    assert chat_format_for(model) == expected


def test_any_other_template_is_applied_as_the_file_writes_it(tmp_path: Path) -> None:
    model = gguf(tmp_path / "phi-3.gguf", {"tokenizer.chat_template": PHI3})

    assert chat_format_for(model) is None
    server = ModelServer(
        model_path=model, port=1, context_tokens=4096, chat_format=None, log_file=tmp_path / "l"
    )
    assert "--chat_format" not in server.command()


def test_a_file_without_a_template_falls_back_to_its_family(tmp_path: Path) -> None:
    gemma = gguf(tmp_path / "renamed.gguf", {"general.architecture": "gemma3"})
    other = gguf(tmp_path / "other.gguf", {"general.architecture": "llama"})

    assert chat_format_for(gemma) == "gemma"
    assert chat_format_for(other) == "chatml"


def test_the_default_model_reads_as_chatml_from_its_metadata() -> None:
    metadata = string_metadata(default_model_path(), ["tokenizer.chat_template"])

    assert "<|im_start|>" in metadata["tokenizer.chat_template"]
    assert chat_format_for(default_model_path()) == "chatml"


def test_a_file_that_is_not_gguf_or_is_cut_short_is_refused_in_one_line(tmp_path: Path) -> None:
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_bytes(b"hello, this is text")
    whole = gguf(tmp_path / "whole.gguf", {"tokenizer.chat_template": GEMMA})
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole.read_bytes()[:5000])

    with pytest.raises(GGUFError, match="not a GGUF file"):
        string_metadata(not_gguf, ["tokenizer.chat_template"])
    with pytest.raises(GGUFError, match="cut short"):
        string_metadata(cut, ["tokenizer.chat_template"])
    assert chat_format_for(not_gguf) == "chatml"  # guessed from its name, with a warning
