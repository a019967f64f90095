"""The query's vector without WordLlama's package: its tokenizer and weights, read directly.

A search embeds one query; memory vectors are kept elsewhere.  Importing
`wordllama` and calling ``WordLlama.load`` costs ~0.75 s per process
(pydantic, requests, toml and the whole 16 MB matrix converted to float32),
most of a CLI search's budget.  What ``WordLlama.load(dim=256,
disable_download=True, cache_dir=<package>).embed(texts, norm=True)``
computes for ``l2_supercat`` is small:

1. the wheel's ``tokenizers/l2_supercat_tokenizer_config.json`` as a
   `tokenizers.Tokenizer`, special tokens off, no truncation (so a long text
   is embedded whole: the training config's ``max_length = 256`` is not used
   at inference);
2. the token ids clipped to the vocabulary, their rows of
   ``weights/l2_supercat_256.safetensors`` (key ``embedding.weight``,
   float16, 32000 × 256, no projection, no dimension cut) as float32;
3. the mean of those rows, divided by its Euclidean norm.

This module does the same with numpy and `tokenizers` alone: the weights
file is memory-mapped and only the query's rows are read, and the files are
found by ``importlib.util.find_spec`` (which does not import the package).

Two corners differ on purpose, where WordLlama gives no usable answer: a
text with no tokens (only the empty string) is a zero row, where WordLlama
divides zero by zero (NaN and a RuntimeWarning); lone surrogates (a
`surrogateescape`d file name) become U+FFFD, where `tokenizers` raises.
WordLlama pads a batch to its longest text and masks the padding; each text
is pooled alone here (the same sums: masked padding adds zeros), so one
long text does not make a (batch × longest × 256) array.
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: The same as `embeddings.DIM` (a test checks); not imported from there
#: because `embeddings` pulls in the store (~0.4 s).
DIM = 256
PACKAGE = "wordllama"
TOKENIZER_FILE = ("tokenizers", "l2_supercat_tokenizer_config.json")
WEIGHTS_FILE = ("weights", "l2_supercat_256.safetensors")
TENSOR_KEY = "embedding.weight"
#: safetensors dtype names -> numpy little-endian dtypes we can read.
_DTYPES = {"F16": "<f2", "F32": "<f4"}
#: A larger header is not a safetensors file (the format caps it at 100 MB).
_MAX_HEADER = 100_000_000
_SURROGATE = re.compile("[\ud800-\udfff]")

Vectors = npt.NDArray[np.float32]


def package_dir() -> Path | None:
    """WordLlama's installed package folder, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _ints(value: object, n: int) -> TypeGuard[list[int]]:
    """`value` is a JSON list of `n` integers."""
    return (
        isinstance(value, list)
        and len(value) == n
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def read_weights(path: Path) -> npt.NDArray[np.floating]:
    """The embedding matrix of a safetensors file, memory-mapped (nothing read yet).

    The format: an 8-byte little-endian header length, a JSON header naming
    each tensor's dtype, shape and byte range, then the data.
    """
    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        try:
            header = json.loads(f.read(min(size, _MAX_HEADER)))
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise ValueError(f"{path}: not a safetensors header ({exc})") from None
    entry = header.get(TENSOR_KEY) if isinstance(header, dict) else None
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: no tensor {TENSOR_KEY!r} in the safetensors header")
    dtype = _DTYPES.get(str(entry.get("dtype")))
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if dtype is None or not _ints(shape, 2) or shape[0] <= 0 or shape[1] != DIM:
        raise ValueError(f"{path}: {TENSOR_KEY!r} is {entry.get('dtype')} {shape}, not (n, {DIM})")
    rows, cols = shape
    length = rows * cols * np.dtype(dtype).itemsize
    if not (
        _ints(offsets, 2)
        and offsets[0] >= 0
        and offsets[1] - offsets[0] == length
        and 8 + size + offsets[1] <= path.stat().st_size
    ):
        raise ValueError(f"{path}: {TENSOR_KEY!r} byte range does not match its shape")
    start = offsets[0]
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + start, shape=(rows, cols))


def load_tokenizer(path: Path) -> Tokenizer:
    """The tokenizer as WordLlama configures it: no truncation (padding is not needed)."""
    from tokenizers import Tokenizer  # the `semantic` extra; ~0.1 s to load this vocabulary

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()  # each text is pooled alone (the module docstring says why)
    return tokenizer


@dataclass(frozen=True, slots=True)
class _Model:
    tokenizer: Tokenizer
    weights: npt.NDArray[np.floating]


_lock = threading.Lock()
_models: dict[Path, _Model] = {}


def _model(folder: Path) -> _Model:
    """The tokenizer and weights of `folder`, loaded once per process."""
    with _lock:
        model = _models.get(folder)
        if model is None:
            tokenizer_path = folder.joinpath(*TOKENIZER_FILE)
            weights_path = folder.joinpath(*WEIGHTS_FILE)
            for path in (tokenizer_path, weights_path):
                if not path.is_file():
                    raise FileNotFoundError(f"{path}: missing from the {PACKAGE} package")
            model = _Model(load_tokenizer(tokenizer_path), read_weights(weights_path))
            _models[folder] = model
        return model


def _clean(text: str) -> str:
    """Lone surrogates (undecodable bytes kept by surrogateescape) as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


class QueryEmbedder:
    """Unit vectors equal to `embeddings.Embedder`'s, without importing `wordllama`.

    Construction only finds the files; the tokenizer and the weights are
    loaded on the first `embed` and shared by every instance in the process.
    """

    def __init__(self, folder: Path | None = None) -> None:
        found = folder or package_dir()
        if found is None:
            raise ImportError(f"{PACKAGE} is not installed (the `semantic` extra)")
        self.folder = found

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors of `texts` (float32, one row each; zeros for a text with no tokens)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        model = _model(self.folder)
        encodings = model.tokenizer.encode_batch(
            [_clean(t) for t in texts], add_special_tokens=False
        )
        last = model.weights.shape[0] - 1
        pooled = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, last)
            if len(ids):
                # Rows in token order, summed in float32 in that order, as WordLlama does.
                vectors = model.weights[ids].astype(np.float32)
                total = np.sum(vectors, axis=0, dtype=np.float32)
                pooled[row] = total / np.float32(len(ids))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out = np.zeros_like(pooled)
        np.divide(pooled, norms, out=out, where=norms > 0)
        return out


__all__ = ["DIM", "QueryEmbedder", "package_dir", "read_weights"]
