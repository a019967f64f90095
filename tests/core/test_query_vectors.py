"""The light query embedder computes WordLlama's vectors without importing WordLlama.

The oracle is `embeddings.Embedder` (WordLlama itself, loaded from its wheel);
the tests that need the model skip when the optional `semantic` extra is not
installed.  The file-reading checks build their own small files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.core.search import embeddings
from memlens.core.search.query_vectors import (
    BULK_TOKENS,
    DIM,
    SUBSET_CHARS,
    QueryEmbedder,
    Vocabulary,
    _cache_file,
    _clean,
    _Model,
    _source_key,
    load_vocabulary,
    package_dir,
    read_weights,
)
from memlens.core.store.db import cache_dir

#: Varied texts: empty, one word, unicode, emoji, punctuation only, mixed case,
#: whitespace only, special-token spellings, markup, and texts far longer than
#: the training config's 256 tokens (inference does not truncate).
TEXTS = [
    "",
    "disk",
    "x",
    " ",
    "\t\n  \n",
    "Postgres disk at 71%",
    "database storage running out",
    "MiXeD CaSe TeXt wItH CAPITALS",
    "!!!???...;;;---",
    "ÜBER straße café naïve",
    "日本語のテキストと漢字",
    "Привет, мир! Как дела?",
    "مرحبا بالعالم",
    "🔥🚀 emoji only 🧠💾",
    "👩‍👩‍👧‍👦 family, 🇳🇴 flag",
    "a</s>b <s> <unk> special-token spellings",
    "[bold]markup[/bold] [@click=app.quit]",
    "tabs\tand\nnew\r\nlines",
    "zero\u200bwidth and bidi \u202eoverride",
    "numbers 3.14159 2026-11-27 0xFF 1e-6",
    "the the the the the the",
    "Tomatoes, beans and basil from Nordlys.",
    "Luka moves up to the orange belt in March.",
    "C:\\Users\\path/../../etc/passwd",
    "https://example.com/a?b=c&d=e#frag",
    "SELECT * FROM memories WHERE id = 'x';",
    "long " * 3000,
    " ".join(f"word{i} Ünïcödé 🚀" for i in range(800)),
    "\x00\x01\x1b[31m control characters",
    "  leading and trailing spaces  ",
]


class WordLlamaItself:
    """The oracle: WordLlama loaded from its wheel, offline, as its own API embeds."""

    def __init__(self) -> None:
        wordllama = pytest.importorskip("wordllama")
        package = Path(wordllama.__file__).parent
        self.model = wordllama.WordLlama.load(
            dim=embeddings.DIM, disable_download=True, cache_dir=package
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.asarray(self.model.embed(list(texts), norm=True), dtype=np.float32)
        return out.reshape(len(texts), embeddings.DIM)


@pytest.fixture(scope="module")
def reference() -> WordLlamaItself:
    return WordLlamaItself()


def _wordllama(embedder: WordLlamaItself, texts: list[str]) -> np.ndarray:
    """WordLlama's vectors; it divides 0 by 0 for a text with no tokens (warns, NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return embedder.embed(texts)


@pytest.mark.parametrize("alone", [False, True], ids=["batch", "alone"])
def test_the_vectors_equal_wordllamas(reference: WordLlamaItself, alone: bool) -> None:
    """In one batch (over SUBSET_CHARS: the full tokenizer) and alone (mostly the subset)."""
    embedder = QueryEmbedder()
    ours = np.vstack([embedder.embed([t]) for t in TEXTS]) if alone else embedder.embed(TEXTS)
    theirs = _wordllama(reference, TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), DIM)
    for text, mine, ref in zip(TEXTS[1:], ours[1:], theirs[1:], strict=True):
        assert np.allclose(mine, ref, rtol=0, atol=1e-6), text[:40]
        assert abs(float(np.linalg.norm(mine)) - 1.0) < 1e-5, text[:40]
    # Different texts give different vectors (the comparison is not of constants).
    assert not np.allclose(ours[1], ours[2], atol=1e-3)
    assert float(ours[5] @ ours[6]) > float(ours[5] @ ours[21])


def test_the_empty_text_is_a_zero_row_where_wordllama_gives_nan(
    reference: WordLlamaItself,
) -> None:
    ours = QueryEmbedder().embed(["", "disk"])
    theirs = _wordllama(reference, ["", "disk"])
    assert np.isnan(theirs[0]).all()
    assert not ours[0].any()
    assert np.allclose(ours[1], theirs[1], rtol=0, atol=1e-6)


def test_each_text_alone_gives_the_same_row_as_in_a_batch() -> None:
    pytest.importorskip("wordllama")
    embedder = QueryEmbedder()
    batch = embedder.embed(TEXTS)
    alone = np.vstack([embedder.embed([t]) for t in TEXTS])
    assert np.array_equal(batch, alone)
    assert embedder.embed([]).shape == (0, DIM)


def test_a_batch_of_memories_gathers_from_float32_weights_with_the_same_rows(
    reference: WordLlamaItself,
) -> None:
    """Over BULK_TOKENS the rows come from a float32 copy: the same vectors, bit for bit."""
    embedder = QueryEmbedder()
    texts = [f"{t} memory {i}" for i in range(12) for t in TEXTS]
    bulk = embedder.embed(texts)
    from memlens.core.search.query_vectors import _model

    model = _model(embedder.folder)
    assert model._weights32 is not None and model._weights32.dtype == np.float32
    assert model.rows_for(BULK_TOKENS - 1) is model.weights  # a query stays on the map
    alone = np.vstack([embedder.embed([t]) for t in texts[:: len(TEXTS) + 1]])
    assert np.array_equal(bulk[:: len(TEXTS) + 1], alone)
    theirs = _wordllama(reference, texts[1:40])
    assert np.allclose(bulk[1:40], theirs, rtol=0, atol=1e-6)


def test_a_lone_surrogate_is_embedded_as_the_replacement_character(
    reference: WordLlamaItself,
) -> None:
    text = "obs-\udcff.md"
    with pytest.raises(TypeError):  # tokenizers refuses it, so WordLlama does too
        reference.embed([text])
    ours = QueryEmbedder().embed([text])
    assert np.allclose(ours, _wordllama(reference, ["obs-\ufffd.md"]), rtol=0, atol=1e-6)


def test_the_model_is_loaded_once_per_process() -> None:
    pytest.importorskip("wordllama")
    from memlens.core.search import query_vectors

    QueryEmbedder().embed(["one"])
    folder = QueryEmbedder().folder
    first = query_vectors._models[folder]
    QueryEmbedder().embed(["two"])
    assert query_vectors._models[folder] is first


def test_the_dimension_and_cache_folder_are_the_stores() -> None:
    assert DIM == embeddings.DIM
    assert _cache_file(["a"]).parent == cache_dir()
    assert _cache_file(["a"]) != _cache_file(["b"])  # one file per tokenizer file


def test_wordllama_is_never_imported() -> None:
    pytest.importorskip("wordllama")
    code = (
        "import sys\n"
        "from memlens.core.search.query_vectors import QueryEmbedder\n"
        "v = QueryEmbedder().embed(['database storage running out', ''])\n"
        "assert v.shape == (2, 256) and abs(float((v[0] ** 2).sum()) - 1) < 1e-5\n"
        "heavy = sorted(m for m in ('wordllama', 'safetensors', 'pydantic', 'requests')\n"
        "               if m in sys.modules)\n"
        "print(','.join(heavy) or 'none')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "none"


def test_no_package_folder_and_missing_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"l2_supercat_tokenizer_config\.json"):
        QueryEmbedder(tmp_path).embed(["x"])
    assert QueryEmbedder(tmp_path).embed([]).shape == (0, DIM)  # nothing to load
    if package_dir() is None:
        with pytest.raises(ImportError, match="semantic"):
            QueryEmbedder()


def _safetensors(path: Path, header: object, data: bytes) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + data)
    return path


def test_the_weights_are_read_from_the_safetensors_layout(tmp_path: Path) -> None:
    matrix = np.arange(3 * DIM, dtype="<f2").reshape(3, DIM) / 7
    header = {
        "__metadata__": {"format": "np"},
        "embedding.weight": {"dtype": "F16", "shape": [3, DIM], "data_offsets": [4, 4 + 6 * DIM]},
    }
    path = _safetensors(tmp_path / "w.safetensors", header, b"pad!" + matrix.tobytes())
    assert np.array_equal(read_weights(path), matrix)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (None, "no tensor"),
        ({"dtype": "BF16", "shape": [1, DIM], "data_offsets": [0, 2 * DIM]}, "BF16"),
        ({"dtype": "F16", "shape": [1, 64], "data_offsets": [0, 128]}, r"not \(n, 256\)"),
        ({"dtype": "F16", "shape": [2, DIM], "data_offsets": [0, 2 * DIM]}, "byte range"),
    ],
)
def test_a_bad_weights_header_names_the_file(tmp_path: Path, entry: object, message: str) -> None:
    header = {} if entry is None else {"embedding.weight": entry}
    path = _safetensors(tmp_path / "bad.safetensors", header, bytes(4 * DIM))
    with pytest.raises(ValueError, match=message) as caught:
        read_weights(path)
    assert str(path) in str(caught.value)


def test_a_file_that_is_not_safetensors_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "junk.safetensors"
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!")
    with pytest.raises(ValueError, match="not a safetensors header") as caught:
        read_weights(path)
    assert str(path) in str(caught.value)
    # A header promising more bytes than the file holds.
    header = {
        "embedding.weight": {"dtype": "F16", "shape": [9, DIM], "data_offsets": [0, 18 * DIM]}
    }
    short = _safetensors(tmp_path / "short.safetensors", header, bytes(2 * DIM))
    with pytest.raises(ValueError, match="byte range"):
        read_weights(short)


# ---------------------------------------------------------------- the small exact tokenizer


@pytest.fixture(scope="module")
def tokenizers_pair() -> tuple[Vocabulary, Any]:
    """The flat vocabulary and the full tokenizer, configured as WordLlama's."""
    pytest.importorskip("wordllama")
    from tokenizers import Tokenizer

    folder = package_dir()
    assert folder is not None
    path = folder / "tokenizers" / "l2_supercat_tokenizer_config.json"
    full = Tokenizer.from_file(str(path))
    full.no_truncation()
    return Vocabulary.parse(path.read_bytes()), full


_PIECES = st.sampled_from(
    [
        " ",
        "  ",
        "</s>",
        "<s>",
        "<unk>",
        "<0x41>",
        "\n",
        "\t",
        "▁",
        "🚀",
        "é",
        "ß",
        "漢",
        "the",
        "ing",
    ]
)
_TEXT = st.lists(st.one_of(st.text(max_size=8), _PIECES), max_size=12).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_TEXT, min_size=1, max_size=3))
def test_the_small_tokenizer_gives_the_full_ones_ids(
    tokenizers_pair: tuple[Vocabulary, Any], texts: list[str]
) -> None:
    vocabulary, full = tokenizers_pair
    texts = [_clean(t) for t in texts]
    small = vocabulary.tokenizer_for(texts)
    assert small.get_vocab_size() < 2000  # much smaller than the 32,000 tokens
    for text in texts:
        expected = full.encode(text, add_special_tokens=False).ids
        assert small.encode(text, add_special_tokens=False).ids == expected


def test_every_fixed_text_tokenizes_alike(tokenizers_pair: tuple[Vocabulary, Any]) -> None:
    vocabulary, full = tokenizers_pair
    for text in TEXTS:
        small = vocabulary.tokenizer_for([text])
        expected = full.encode(text, add_special_tokens=False).ids
        assert small.encode(text, add_special_tokens=False).ids == expected, text[:40]
    assert sum(map(len, TEXTS)) > SUBSET_CHARS  # the batch test takes the full path


def test_the_flat_vocabulary_is_kept_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wordllama")
    folder = package_dir()
    assert folder is not None
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path))
    expected = _Model(folder).tokenizer(["disk full"]).encode("disk full").ids
    key = _source_key(folder / "tokenizers" / "l2_supercat_tokenizer_config.json")
    kept = _cache_file(key)
    assert kept.parent == tmp_path and kept.is_file()
    # A later process reads it and never parses the tokenizer file.
    monkeypatch.setattr(Vocabulary, "parse", _no_parse)
    assert _Model(folder).tokenizer(["disk full"]).encode("disk full").ids == expected
    assert load_vocabulary(key, kept) is not None
    assert load_vocabulary([*key[:-1], -1], kept) is None  # another layout version
    monkeypatch.undo()
    monkeypatch.setenv("MEMLENS_CACHE_DIR", str(tmp_path))
    # A damaged file is parsed again and replaced: cut in its header or in its merges.
    whole = kept.read_bytes()
    kept.write_bytes(whole[:-12])
    assert load_vocabulary(key, kept) is None
    kept.write_bytes(whole[:5000])
    assert load_vocabulary(key, kept) is None
    assert _Model(folder).tokenizer(["disk full"]).encode("disk full").ids == expected
    assert load_vocabulary(key, kept) is not None


def test_a_tokenizer_file_that_is_not_bpe_is_refused() -> None:
    with pytest.raises(ValueError, match="not a BPE"):
        Vocabulary.parse(json.dumps({"model": {"type": "WordPiece", "vocab": {}}}).encode())
    gappy = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 2}, "merges": []}}
    with pytest.raises(ValueError, match=r"0\.\.n-1"):
        Vocabulary.parse(json.dumps(gappy).encode())


def _no_parse(raw: bytes) -> Vocabulary:
    raise AssertionError("the kept vocabulary was not used")
