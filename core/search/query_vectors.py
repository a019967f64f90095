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
Loading the whole tokenizer file costs ~0.1 s by itself, so a short text is
tokenized by a tokenizer holding only the vocabulary entries that occur in
it (`Vocabulary` says why that is exact), built in a few milliseconds from
a flat copy of the file kept in the cache folder (made once, ~0.3 s).

Two corners differ on purpose, where WordLlama gives no usable answer: a
text with no tokens (only the empty string) is a zero row, where WordLlama
divides zero by zero (NaN and a RuntimeWarning); lone surrogates (a
`surrogateescape`d file name) become U+FFFD, where `tokenizers` raises.
WordLlama pads a batch to its longest text and masks the padding; each text
is pooled alone here (the same sums: masked padding adds zeros), so one
long text does not make a (batch × longest × 256) array.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

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
#: The flat vocabulary's file name in the cache folder, and its layout version.
CACHE_PREFIX = "wordllama-l2_supercat-vocabulary"
CACHE_VERSION = 1
#: Above this many characters of text, the full tokenizer is loaded instead
#: (finding the substrings costs ~6 µs a character; the full load ~0.1 s).
SUBSET_CHARS = 4096
_SURROGATE = re.compile("[\ud800-\udfff]")
#: A call embedding at least this many tokens gathers them from a float32 copy
#: of the weights (`_Model.rows_for`); ~50 one-kilobyte memories.
BULK_TOKENS = 25_000

Vectors = npt.NDArray[np.float32]
IdArray = npt.NDArray[np.int32]


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


class Vocabulary:
    """The BPE tokenizer file as flat data: each token by id, each merge as ids.

    ``Tokenizer.from_file`` on the full file costs ~0.1 s (32,000 tokens and
    61,249 merges built into hash maps); a query uses a few dozen tokens.
    BPE only ever forms tokens that are substrings of the (normalized) text,
    so a tokenizer holding every vocabulary entry that is such a substring,
    the byte-fallback and special tokens, and every merge among those entries
    in the original order tokenizes that text exactly as the full one: at
    each step the full one's lowest-ranked applicable merge joins two
    substrings into a substring, so it is in the subset, and the subset
    holds no merge the full one lacks.  `tokenizer_for` builds that small
    tokenizer (a few milliseconds); this flat form is kept in the cache
    folder so a process never parses the 1.8 MB file (~0.3 s, once).
    """

    def __init__(self, base: dict[str, Any], tokens: list[str], merges: IdArray) -> None:
        self.base = base  # the tokenizer file without its vocabulary and merges
        self.tokens = tokens
        self.merges = merges  # (n, 3) int32: left, right, merged; rank order
        self.index = dict(zip(tokens, range(len(tokens)), strict=True))
        self.longest = max(map(len, tokens))
        added = base.get("added_tokens")
        specials = [a.get("content") for a in added if isinstance(a, dict)] if added else []
        # Added (special) tokens are matched in the raw text, so they are always kept,
        # and so are the byte-fallback tokens a character outside the vocabulary becomes.
        bytes_ = (f"<0x{b:02X}>" for b in range(256))
        self.always = {self.index[t] for t in (*specials, *bytes_) if t in self.index}
        found = sorted({t for t in specials if t in self.index}, key=len, reverse=True)
        # Leftmost-longest, as added tokens match.
        self._special = re.compile("|".join(map(re.escape, found))) if found else None
        # The file's own normalizer (here: a leading "▁", spaces as "▁"), so the
        # substrings are looked for in the text BPE sees.
        normalizer = _tokenizer(self.base, {tokens[i]: i for i in self.always}, []).normalizer
        self._normalize: Callable[[str], str] = (
            normalizer.normalize_str if normalizer is not None else str
        )

    @classmethod
    def parse(cls, raw: bytes) -> Vocabulary:
        """The flat form of a BPE tokenizer file (ValueError if it is not one)."""
        base = json.loads(raw)
        model = base.get("model") if isinstance(base, dict) else None
        if not isinstance(model, dict) or model.get("type") != "BPE":
            raise ValueError("not a BPE tokenizer file")
        vocab, pairs = model.pop("vocab"), model.pop("merges")
        if not isinstance(vocab, dict) or sorted(vocab.values()) != list(range(len(vocab))):
            raise ValueError("token ids are not 0..n-1")
        tokens = [""] * len(vocab)
        for token, i in vocab.items():
            tokens[i] = token
        merges = np.zeros((len(pairs), 3), dtype=np.int32)
        for rank, pair in enumerate(pairs):
            left, right = pair.split(" ", 1) if isinstance(pair, str) else pair
            merges[rank] = (vocab[left], vocab[right], vocab[left + right])
        return cls(base, tokens, merges)

    def tokenizer_for(self, texts: Sequence[str]) -> Tokenizer:
        """A tokenizer that tokenizes `texts` exactly as the full one (see the class)."""
        keep = set(self.always)
        for text in texts:
            for part in self._parts(text):
                keep.update(self._substrings(self._normalize(part)))
        inside = np.zeros(len(self.tokens), dtype=np.bool_)
        inside[np.fromiter(keep, dtype=np.int64, count=len(keep))] = True
        m = self.merges
        chosen = m[inside[m[:, 0]] & inside[m[:, 1]] & inside[m[:, 2]]]
        vocab = {self.tokens[i]: i for i in sorted(keep)}
        pairs = [(self.tokens[a], self.tokens[b]) for a, b in chosen[:, :2].tolist()]
        # "a b", the form every tokenizers version reads; a pair only where a token
        # holds a space (the form newer files use for them).
        merges = [f"{a} {b}" if " " not in a + b else [a, b] for a, b in pairs]
        return _tokenizer(self.base, vocab, merges)

    def _parts(self, text: str) -> list[str]:
        """The text, and its pieces between special tokens (each is normalized alone)."""
        if self._special is None:
            return [text]
        return list(dict.fromkeys([text, *self._special.split(text)]))

    def _substrings(self, text: str) -> set[int]:
        """Ids of the vocabulary entries that occur in `text`."""
        found: set[int] = set()
        index, longest = self.index, self.longest
        for start in range(len(text)):
            for end in range(start + 1, min(len(text), start + longest) + 1):
                i = index.get(text[start:end])
                if i is not None:
                    found.add(i)
        return found


def _source_key(path: Path) -> list[object]:
    """What a cached vocabulary was made from: the file's path, size and change time."""
    st = path.stat()
    return [str(path), st.st_size, st.st_mtime_ns, CACHE_VERSION]


def _cache_file(key: list[object]) -> Path:
    """Where the flat vocabulary of the file `key` names is kept: memlens's cache folder.

    One file per installed tokenizer file (a short hash of its key in the
    name), so two installations sharing the cache folder do not keep
    replacing each other's.  The folder is `store.db.cache_dir` (a test
    checks); not imported from there because the store package costs ~0.4 s.
    """
    tag = hashlib.blake2b(json.dumps(key).encode(), digest_size=6).hexdigest()
    name = f"{CACHE_PREFIX}-{tag}.bin"
    env = os.environ.get("MEMLENS_CACHE_DIR")
    if env:
        return Path(env) / name
    import platformdirs  # lazy, as in store.db

    return Path(platformdirs.user_cache_dir("memlens")) / name


def save_vocabulary(vocabulary: Vocabulary, key: list[object], path: Path) -> None:
    """Keep `vocabulary` at `path` (a cache: a failure only costs the next process a parse)."""
    merges = vocabulary.merges.astype("<i4").tobytes()
    header = {"key": key, "base": vocabulary.base, "tokens": vocabulary.tokens}
    header["merges"] = hashlib.blake2b(merges, digest_size=16).hexdigest()  # torn or altered
    data = json.dumps(header).encode("utf-8", "surrogatepass")
    blob = len(data).to_bytes(8, "little") + data + merges
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(blob)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def load_vocabulary(key: list[object], path: Path) -> Vocabulary | None:
    """The vocabulary kept at `path` for `key`, or None (absent, stale or damaged)."""
    try:
        raw = path.read_bytes()
        size = int.from_bytes(raw[:8], "little")
        header = json.loads(raw[8 : 8 + size].decode("utf-8", "surrogatepass"))
        body = raw[8 + size :]
        if header.get("key") != key:
            return None
        if header.get("merges") != hashlib.blake2b(body, digest_size=16).hexdigest():
            return None
        merges = np.frombuffer(body, dtype="<i4").reshape(-1, 3)
        tokens, base = header["tokens"], header["base"]
        ok = isinstance(tokens, list) and set(map(type, tokens)) == {str}
        if not ok or not tokens or not isinstance(base, dict):
            return None
        if merges.size and (merges.min() < 0 or merges.max() >= len(tokens)):
            return None
        return Vocabulary(base, tokens, merges.astype(np.int32))
    except Exception:  # a cache never fails: whatever is wrong, the file is parsed again
        return None


def _tokenizer(
    base: dict[str, Any], vocab: dict[str, int], merges: list[str | list[str]]
) -> Tokenizer:
    """A tokenizer of `base`'s settings with this vocabulary, configured as WordLlama's."""
    from tokenizers import Tokenizer  # the `semantic` extra

    spec = {**base, "model": {**base["model"], "vocab": vocab, "merges": merges}}
    return _configured(Tokenizer.from_str(json.dumps(spec)))


def _tokenizer_file(path: Path) -> Tokenizer:
    """The whole tokenizer file, loaded as WordLlama loads it (~0.1 s)."""
    from tokenizers import Tokenizer  # the `semantic` extra

    return _configured(Tokenizer.from_file(str(path)))


def _configured(tokenizer: Tokenizer) -> Tokenizer:
    """WordLlama's settings: no truncation (a long text is embedded whole)."""
    tokenizer.no_truncation()
    tokenizer.no_padding()  # each text is pooled alone (the module docstring says why)
    return tokenizer


class _Model:
    """One package folder's weights and tokenizers, loaded when first needed."""

    def __init__(self, folder: Path) -> None:
        self.tokenizer_path = folder.joinpath(*TOKENIZER_FILE)
        weights_path = folder.joinpath(*WEIGHTS_FILE)
        for path in (self.tokenizer_path, weights_path):
            if not path.is_file():
                raise FileNotFoundError(f"{path}: missing from the {PACKAGE} package")
        self.weights = read_weights(weights_path)
        self._weights32: npt.NDArray[np.float32] | None = None
        self._lock = threading.Lock()
        self._full: Tokenizer | None = None
        self._vocabulary: Vocabulary | None = None
        self._no_vocabulary = False

    def tokenizer(self, texts: Sequence[str]) -> Tokenizer:
        """A tokenizer for `texts`: the small exact one for short texts, else the full one."""
        with self._lock:
            if sum(map(len, texts)) <= SUBSET_CHARS:
                vocabulary = self._flat()
                if vocabulary is not None:
                    return vocabulary.tokenizer_for(texts)
            if self._full is None:
                self._full = _tokenizer_file(self.tokenizer_path)
            return self._full

    def rows_for(self, tokens: int) -> npt.NDArray[np.floating]:
        """The weights to gather `tokens` token rows from.

        The file's float16 rows, memory-mapped, for a query; for a batch of
        memories, a float32 copy made once (32 MB, ~25 ms): numpy converts
        float16 without SIMD, and converting each gathered row took a third
        of embedding a memory.  The rows are the same numbers either way
        (float16 -> float32 is exact), summed in the same order.
        """
        if tokens < BULK_TOKENS:
            return self.weights
        with self._lock:
            if self._weights32 is None:
                self._weights32 = np.asarray(self.weights, dtype=np.float32)
            return self._weights32

    def _flat(self) -> Vocabulary | None:
        """The flat vocabulary: from the cache folder, else parsed once and kept there."""
        if self._vocabulary is None and not self._no_vocabulary:
            key = _source_key(self.tokenizer_path)
            cache = _cache_file(key)
            self._vocabulary = load_vocabulary(key, cache)
            if self._vocabulary is None:
                try:
                    self._vocabulary = Vocabulary.parse(self.tokenizer_path.read_bytes())
                except (OSError, ValueError, KeyError, TypeError):
                    self._no_vocabulary = True  # not the BPE file we know: the full tokenizer
                    return None
                save_vocabulary(self._vocabulary, key, cache)
        return self._vocabulary


_lock = threading.Lock()
_models: dict[Path, _Model] = {}


def _model(folder: Path) -> _Model:
    """The model of `folder`, shared by the whole process."""
    with _lock:
        model = _models.get(folder)
        if model is None:
            model = _models[folder] = _Model(folder)
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
        clean = [_clean(t) for t in texts]
        encodings = model.tokenizer(clean).encode_batch(clean, add_special_tokens=False)
        last = model.weights.shape[0] - 1
        weights = model.rows_for(sum(len(e.ids) for e in encodings))
        pooled = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, last)
            if len(ids):
                # Rows in token order, summed in float32 in that order, as WordLlama does.
                vectors = weights[ids].astype(np.float32, copy=False)
                total = np.sum(vectors, axis=0, dtype=np.float32)
                pooled[row] = total / np.float32(len(ids))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out = np.zeros_like(pooled)
        np.divide(pooled, norms, out=out, where=norms > 0)
        return out


__all__ = ["DIM", "QueryEmbedder", "package_dir", "read_weights"]
