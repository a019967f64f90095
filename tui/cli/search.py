"""`memlens search`: ranked search over every vault below PATH.

The query language (words, "phrases", ``tag:``/``type:``/``health:``... filters,
``-`` negation) is described in `memlens.core.search.query`; the ranking in
`memlens.core.search.index`.  The Project Ocean script's flags are accepted too, and
``--format ocean`` prints that script's JSON shape for tools written against it.

Exit codes: 0 ok (also when nothing matched: an empty result is an answer,
not a problem), 2 for a bad query or usage error.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memlens.core.text.sanitize import one_line

from .common import (
    as_of_option,
    echo,
    emit_json,
    is_terminal,
    load_catalog,
    resolve_as_of,
    use_cache,
    vaults_as_stored,
)

if TYPE_CHECKING:
    from memlens.core import Catalog
    from memlens.core.search.fresh_check import Checked
    from memlens.core.search.index import Hit, SearchIndex, SearchResults
    from memlens.core.search.query import Filter, Query

#: The reference script's default number of results (``--format ocean``).
OCEAN_DEFAULT_LIMIT = 5
DEFAULT_LIMIT = 20
SNIPPET_CHARS = 200


def flag_filters(
    agent: str | None,
    all_agents: bool,
    no_shared: bool,
    tags: str | None,
    min_confidence: float | None,
) -> list[Filter]:
    """The Project Ocean script's flags as query filters.

    ``--agent NAME`` searches that agent's memories plus ``shared/`` (unless
    ``--no-shared``); a vault named NAME of another format counts as well.
    ``--tags a,b`` needs one of the tags; ``--min-confidence X`` skips
    memories below X (a missing confidence counts as 1.0, as the script does).
    """
    from memlens.core.search.query import Filter  # the format registry: only when run

    out: list[Filter] = []
    if agent and not all_agents:
        names = (agent.lower(),) if no_shared else (agent.lower(), "shared")
        out.append(Filter("agent", ":", names, token=f"--agent {agent}"))
    if tags:
        values = tuple(t.strip().lower() for t in tags.split(",") if t.strip())
        if values:
            out.append(Filter("tag", ":", values, token=f"--tags {tags}"))
    if min_confidence is not None:
        out.append(
            Filter(
                "confidence",
                ">=",
                (str(min_confidence),),
                float(min_confidence),
                token=f"--min-confidence {min_confidence}",
            )
        )
    return out


def _search_index(catalog: Catalog, when: date, recheck: bool = False) -> SearchIndex:
    """The catalog's index: persisted in the cache folder unless `--no-cache`.

    The persisted index (`memlens.core.search.persisted`) reads only the
    query's terms and is updated in place for changed files; its scores are
    exactly a fresh build's.
    """
    # numpy and the index code load here, once a search runs (not for --help).
    from memlens.core.search.index import SearchIndex
    from memlens.core.search.persisted import open_index

    if not use_cache():
        return SearchIndex.from_catalog(catalog, when)

    index, _stats = open_index(catalog, when, recheck=recheck)
    return index


#: Of a big vault's files, the share a forked child stats while this process
#: loads the index and runs the query (it stats the rest after).
STAT_SHARE = 0.65


def _fresh_index(path: Path, when: date) -> tuple[SearchIndex, Checked] | None:
    """The persisted index without opening the catalog, and its freshness check, running.

    The stat walk that tells whether a file changed is started first, from
    modules that do not import numpy; the index code loads, and the query
    runs, while it goes on.  Whatever the query found stands only once
    `Checked.confirm()` says no file changed.  None: no index to serve.
    """
    vaults = vaults_as_stored(path)
    if vaults is None:
        return None
    from memlens.core.search.fresh_check import begin

    checked = begin(vaults, when, STAT_SHARE)
    if checked is None:
        return None
    from memlens.core.search.fresh import serve

    index = serve(checked)
    return None if index is None else (index, checked)


#: Fewer memories than this are embedded without a word (a second or so).
EMBED_NOTE_MIN = 2000


def _embedding_note(count: int) -> None:
    """Say on stderr why this search takes long: its index's vectors are made once."""
    if count >= EMBED_NOTE_MIN:
        click.echo(
            f"memlens: embedding up to {count} memories for meaning-based search (once: the "
            "vectors are kept in the cache folder; MEMLENS_SEMANTIC=0 searches by words only)",
            err=True,
        )


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


def ocean_record(hit: Hit, script: dict[str, Any] | None = None) -> dict[str, Any]:
    """One result in the reference ``memory-search.py --json`` shape.

    A hit of a format's own recall script (Project Ocean's, `--rank recall`)
    comes with `script`, the script's record, printed exactly: its fields, key order, values and the
    absolute path it prints.  Any other hit (another format, or `--rank
    relevance`) gets the first generation's keys filled from the memory,
    plus its `id` (and the second generation's importance, refs, verified).
    """
    if script is not None:
        return dict(script)
    m = hit.memory
    created = m.created.isoformat() if m.created is not None else None
    rec: dict[str, Any] = {
        "score": round(hit.score, 4),
        "file": Path(m.path).name,
        "path": str(m.vault_root.resolve() / m.path),
        "source": m.source,
        "tags": list(m.tags),
        "confidence": m.confidence,
        "created": created,
        "snippet": _snippet(m.body or m.title),
        "id": m.id,
    }
    if m.importance is not None:
        # The second generation's script prints these instead of a confidence.
        rec["importance"] = m.importance
        rec["refs"] = m.native.get("refs", 0)
        rec["verified"] = bool(m.native.get("verified"))
    return rec


def _parse(text: str, words_only: bool) -> Query:
    """The query; `words_only`: just the text's words (no filters, phrases or negations).

    With `--format ocean` the Project Ocean vaults get the text as typed (the
    script's tokens); vaults of other formats get its words.
    """
    from memlens.core.search.query import QueryError, parse_query

    if words_only:
        text = " ".join(re.findall(r"[^\W_]+", text))
    try:
        return parse_query(text)
    except QueryError as exc:
        raise click.UsageError(str(exc)) from None


def _emit_ocean(records: list[dict[str, Any]]) -> None:
    """The results as memory-search.py prints them: ``json.dumps(..., indent=2)``.

    Byte for byte the script's text (its ASCII escapes make every control,
    bidi or non-ASCII character of a memory a ``\\uXXXX`` escape: nothing
    reaches the terminal raw).
    """
    sys.stdout.write(json.dumps({"results": records, "total": len(records)}, indent=2) + "\n")


#: The recall scripts' flags: agent, no_shared, tags, min_importance, min_confidence.
RecallFlags = tuple[str | None, bool, str | None, float | None, float | None]


def _recall_hits(
    path: Path,
    parsed: Query,
    script_query: str | None,
    when: date,
    n: int,
    flags: RecallFlags,
    filters: list[Filter],
) -> tuple[list[Hit], dict[int, dict[str, Any]]]:
    """`--rank recall`: each format's own recall formula where it has one.

    A vault whose format ranks recall itself (Project Ocean: memory-search.py)
    is ranked by it, with the script's flags, on `script_query` (the text as
    typed, `--format ocean`) or else the query's words; the other vaults keep
    memlens's TF-IDF recall ranking (cosine × confidence × decay weight).
    Hits merge by score, then vault; within a vault they keep its own order
    (the script's ties come in its load order).  Also returns each script
    hit's own record, by the id of its memory.
    """
    from memlens.core.decay import decay_of
    from memlens.core.formats.recall_model import RecallRequest
    from memlens.core.search.index import Hit

    if script_query is None and (parsed.filters or parsed.phrases or parsed.excluded_phrases):
        raise click.UsageError(
            "--rank recall takes words only (the formats' own formula); "
            "use --agent, --tags, --no-shared, --min-importance"
        )
    agent, no_shared, tags, min_importance, min_confidence = flags
    catalog = load_catalog(path)
    request = RecallRequest(
        query=script_query if script_query is not None else " ".join(parsed.words),
        as_of=when,
        agent=agent,
        no_shared=no_shared,
        # As the scripts split them: at commas, nothing stripped, compared as written.
        tags=tuple(tags.split(",")) if tags else (),
        min_importance=min_importance or 0.0,
        min_confidence=min_confidence or 0.0,
    )
    hits: list[Hit] = []
    records: dict[int, dict[str, Any]] = {}
    own: set[str] = set()
    for vault in catalog.vaults:
        found = vault.adapter.recall(vault.memories, request)
        if found is None:
            continue
        own.add(str(vault.root))
        for h in found:
            health = decay_of(h.memory, when, explain=False).health.value
            hits.append(Hit(h.memory, h.score, {**h.explain, "rank": "recall", "health": health}))
            if h.record is not None:
                records[id(h.memory)] = h.record
    if len(own) < len(catalog.vaults):
        rest = _search_index(catalog, when).run(parsed, n, extra_filters=filters, rank="recall")
        hits.extend(h for h in rest.hits if str(h.memory.vault_root) not in own)
    hits.sort(key=lambda h: (-h.score, str(h.memory.vault_root)))  # stable: each vault's order
    return hits[:n], records


def _relevance_line(e: dict[str, Any]) -> str:
    terms = ", ".join(
        f"{t['word']}"
        + (f"~{t['matched']}" if t["via"] != "exact" else "")
        + f" {t['contribution']:.3f} ({'+'.join(t['fields'])})"
        for t in e["terms"][:5]
    )
    rel = "1 (filters only)" if e["filter_only"] else f"{e['relevance']:.4f}"
    imp = e["importance"]
    parts = [
        f"relevance {rel}" + (f" [{terms}]" if terms else ""),
        f"confidence {e['confidence']:.2f} ({e['confidence_from']})",
        f"decay weight {e['decay_weight']:.4f} ({e['status']})",
        f"importance {'-' if imp is None else f'{imp:g}'}",
    ]
    sem = e.get("semantic")
    if sem is not None:
        parts.insert(
            1,
            f"fused: lexical rank {sem.get('lexical_rank', '-')} (bm25 {e['bm25']:.4f}), "
            f"meaning rank {sem.get('semantic_rank', '-')}"
            + (f" (cosine {sem['cosine']:.3f})" if "cosine" in sem else ""),
        )
    if e["ignored_words"]:
        parts.append("ignored " + ",".join(e["ignored_words"]))
    return "    " + " · ".join(parts)


def _explain_line(hit: Hit) -> str:
    if hit.explain.get("rank") == "recall":
        e = hit.explain
        return "    " + f"{e['formula']}: {e['cosine']:.4f} × {e['weight']} × {e['freshness']:.4f}"
    e = hit.explain
    if e.get("rank") == "relevance":
        return _relevance_line(e)
    terms = ", ".join(f"{t['term']} {t['contribution']:.3f}" for t in e.get("terms", [])[:5])
    fuzzy = ", ".join(f"{f['word']}~{f['matched']} {f['score']:.0f}" for f in e["fuzzy_matches"])
    rel = "1 (filters only)" if e["filter_only"] else f"{e['relevance']:.4f}"
    parts = [
        f"cosine {e['cosine']:.4f}" + (f" [{terms}]" if terms else ""),
        f"fuzzy {e['fuzzy']:.0f}" + (f" [{fuzzy}]" if fuzzy else ""),
        f"relevance {rel}",
        f"confidence {e['confidence']:.2f} ({e['confidence_from']})",
        f"decay weight {e['decay_weight']:.4f} ({e['status']})",
    ]
    return "    " + " · ".join(parts)


def _print_hits(hits: list[Hit], base: Path, total: int, explain: bool) -> None:
    headers = ["#", "score", "format", "vault", "id", "title", "health"]
    rows = []
    for i, h in enumerate(hits, 1):
        m = h.memory
        try:
            vault = m.vault_root.resolve().relative_to(base.resolve()).as_posix() or "."
        except ValueError:
            vault = str(m.vault_root)
        rows.append(
            [
                str(i),
                f"{h.score:.4f}",
                m.format,
                vault,
                one_line(m.id, 40),
                one_line(m.title, 70),
                h.explain["health"],
            ]
        )
    if is_terminal() and not explain:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table(title=f"{len(hits)} of {total} matches", header_style="bold")
        for name in headers:
            table.add_column(name, overflow="fold")
        for row in rows:
            table.add_row(*(Text(one_line(cell)) for cell in row))
        Console().print(table)
        return
    echo("\t".join(headers))
    for row, hit in zip(rows, hits, strict=True):
        echo("\t".join(cell.replace("\t", " ") for cell in row))
        if explain:
            echo(_explain_line(hit))
    echo(f"{len(hits)} of {total} matches", err=True)


class QueryCommand(click.Command):
    """A command whose arguments may start with ``-`` (query negations).

    ``memlens search PATH consent -tag:archive`` must not read ``-tag:archive``
    as options (click would take ``-h`` out of ``-health:x`` as --help): known
    options are kept, every other argument that does not start with ``--``
    becomes a positional, as if written after ``--``.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value: set[str] = set()
        flags: set[str] = set()
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                names = [*param.opts, *param.secondary_opts]
                (flags if param.is_flag or param.count else takes_value).update(names)
        opts: list[str] = []
        positional: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            name = arg.split("=", 1)[0]
            if arg == "--":
                positional.extend(args[i + 1 :])
                break
            if name in takes_value:
                opts.append(arg)
                if "=" not in arg and i + 1 < len(args):
                    opts.append(args[i + 1])
                    i += 1
            elif arg in flags or arg.startswith("--"):
                opts.append(arg)  # unknown --options still fail as usage errors
            else:
                positional.append(arg)
            i += 1
        return super().parse_args(ctx, [*opts, "--", *positional])


@click.command(cls=QueryCommand)
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=None, help="Hits to show (20).")
@as_of_option
@click.option("--json", "as_json", is_flag=True, help="One JSON array of hits, best first.")
@click.option(
    "--format",
    "out_format",
    type=click.Choice(["text", "json", "ocean"]),
    default=None,
    help="Output: text (default), json (= --json), or ocean: Project Ocean's "
    "memory-search.py --json, ranked by recall unless --rank says otherwise: the "
    "script's hits, order, scores and JSON (its absolute paths; a vault with no "
    "second-generation file as the first generation's script, else as main's).  "
    "QUERY is then the script's text: no filters, phrases or negation.  On purpose "
    "unlike the script: invalid files are skipped (validate lists them), a BOM file's "
    "frontmatter is read, and agent folders beyond the script's six are searched too.",
)
@click.option("--agent", default=None, help="Only this agent's memories and shared/.")
@click.option(
    "--all",
    "all_agents",
    is_flag=True,
    help="Every agent (the default); ranked by recall it wins over --agent, as in the script.",
)
@click.option("--no-shared", is_flag=True, help="With --agent: leave out shared/.")
@click.option(
    "--tags",
    default=None,
    help="Comma-separated; a hit needs one of them (ranked by recall: as written, "
    "split at commas only, as the script compares them).",
)
@click.option(
    "--min-confidence",
    type=float,
    default=None,
    help="Skip lower confidence (ranked by recall: first-generation vaults).",
)
@click.option(
    "--min-importance", type=float, default=None, help="Skip lower importance (2nd generation)."
)
@click.option(
    "--rank",
    type=click.Choice(["relevance", "recall"]),
    default=None,
    help="relevance (the default; recall with --format ocean): BM25F over every text "
    "field, with word forms and typos; decay, confidence and importance shown, not "
    "multiplied in.  recall: each format's own formula where it has one (Project Ocean: "
    "memory-search.py's cosine × importance × freshness, or × confidence × decay weight "
    "for a first-generation file), else TF-IDF cosine × confidence × decay weight.",
)
@click.option("--explain", is_flag=True, help="Text output: show why each hit ranked.")
def search(
    path: Path,
    query: tuple[str, ...],
    limit: int | None,
    as_of: date | None,
    as_json: bool,
    out_format: str | None,
    agent: str | None,
    all_agents: bool,
    no_shared: bool,
    tags: str | None,
    min_confidence: float | None,
    min_importance: float | None,
    rank: str | None,
    explain: bool,
) -> None:
    """Ranked search of every memory below PATH.

    QUERY is words (ranked by --rank: relevance, BM25F over every text
    field with word forms and typos, fused with meaning when the semantic
    extra is installed, by default; recall, each format's own recall
    formula where it has one (Project Ocean: memory-search.py's), else
    TF-IDF × confidence × decay weight with fuzzy title/tag matching, words
    only), "exact phrases", and filters: tag:x type:x format:x vault:x
    agent:x health:x status:x source:x before:YYYY-MM-DD after:YYYY-MM-DD
    importance>0.5 confidence>=0.8; prefix any of them with - to exclude.
    Ranked by relevance, every memory counts (archived and expired too,
    their health shown) unless a health: or status: filter narrows it;
    ranked by recall, expired, archived and tombstoned memories are left
    out unless a health: or status: filter asks for them (health:all).

    Hits come best first: by score, then relevance, then vault, path,
    line/index and id, so equal scores always come in the same order and
    --limit 5 is the start of --limit 6.

    Example: memlens search ./vaults 'consent -tag:archive health:active' --json
    """
    fmt = out_format or ("json" if as_json else "text")
    if as_json and out_format not in (None, "json"):
        raise click.UsageError("--json and --format ocean are exclusive")
    when = resolve_as_of(as_of)
    # Scripts written against the Project Ocean tool expect its ranking.
    rank = rank or ("recall" if fmt == "ocean" else "relevance")
    if agent and all_agents and rank != "recall":
        # The scripts let --all win over --agent; memlens's own ranking refuses the pair.
        raise click.UsageError("--agent and --all are exclusive")
    text = " ".join(query)
    from memlens.core.search.query import Filter

    # --format ocean ranked by recall: the query is the script's text, no query language.
    script_query = text if fmt == "ocean" and rank == "recall" else None
    parsed = _parse(text, words_only=script_query is not None)
    n = limit if limit is not None else (OCEAN_DEFAULT_LIMIT if fmt == "ocean" else DEFAULT_LIMIT)
    filters = flag_filters(agent, all_agents, no_shared, tags, min_confidence)
    if min_importance is not None:
        filters.append(
            Filter(
                "importance",
                ">=",
                (str(min_importance),),
                float(min_importance),
                token=f"--min-importance {min_importance}",
            )
        )
    script_records: dict[int, dict[str, Any]] = {}
    if rank == "recall":
        flags = (None if all_agents else agent, no_shared, tags, min_importance, min_confidence)
        hits, script_records = _recall_hits(path, parsed, script_query, when, n, flags, filters)
        total = len(hits)
    else:
        hits, total = _relevance_hits(path, parsed, when, n, filters)
    from memlens.core.search.relevance import add_field_counts

    hits = [add_field_counts(h) for h in hits]
    if fmt == "ocean":
        _emit_ocean([ocean_record(h, script_records.get(id(h.memory))) for h in hits])
    elif fmt == "json":
        emit_json(_hit_records(hits, when, path, rank))
    else:
        _print_hits(hits, path, total, explain)


def _relevance_hits(
    path: Path, parsed: Query, when: date, n: int, filters: list[Filter]
) -> tuple[list[Hit], int]:
    """The best `n` hits by relevance, and how many matched: the kept index when fresh."""
    fresh = _fresh_index(path, when)
    index, results = None, None

    def relevance(ix: SearchIndex) -> SearchResults:
        from memlens.core.search.embeddings import semantic_available

        if parsed.has_text and semantic_available():  # the optional extra: meaning too
            ix.enable_semantic(on_embed=_embedding_note)
        return ix.run(parsed, n, extra_filters=filters, rank="relevance")

    if fresh is not None:
        from memlens.core.search.stored_refs import StaleRow

        index, checked = fresh
        try:
            results = relevance(index)
        except StaleRow:
            checked.close()
            index.close()
            # A vault store row the index refers to changed meanwhile: the
            # catalog's way, which also checks the index's references again.
            index = _search_index(load_catalog(path), when, recheck=True)
        else:
            if not checked.confirm():  # a file changed since the index was saved
                index.close()
                index, results = None, None
    if index is None:
        index = _search_index(load_catalog(path), when)
    if results is None:
        results = relevance(index)
    # Once the hits are printed (they may read memories from the index's file).
    click.get_current_context().call_on_close(index.close)
    return results.hits, results.total


def _hit_records(hits: list[Hit], when: date, path: Path, rank: str) -> list[dict[str, Any]]:
    """`search --json`: each hit's memory record, with its place and the search's score."""
    from memlens.core.records import memory_record

    out = []
    for place, h in enumerate(hits, 1):
        rec = memory_record(h.memory, when, path)
        # The record's own "score" is the format's decay score; in search
        # output "score" is the search score (DESIGN.md), so the decay
        # score moves into explain.decay_score.
        rec["score"] = h.score
        rec["rank"] = place
        rec["ranking"] = rank
        rec["explain"] = h.explain
        out.append(rec)
    return out
