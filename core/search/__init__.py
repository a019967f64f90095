"""Full-text search over every vault: one `SearchIndex`, a query language, a cache.

Map of the package:

- `index`: the `SearchIndex` facade (build, incremental updates, `run`,
  `similar`, `near_duplicates`) and the ranking rules in its docstring.
- `state`: `IndexState`, everything a built index knows as plain data
  (what a saved index holds); `columns` (per-row metadata and codes) and
  `postings` (term -> rows with weights, title word/tag -> rows) are its parts.
- `analysis`: tokenising and the text a memory is indexed by.
- `fit`: the TF-IDF fit of a build (half in a parse worker when large).
- `briefs`: each row's decay at the index's date.
- `query`: the query language; `filters`: filter masks; `phrases`: phrase
  candidates and checks; `fuzzy`: title/tag word matching.
- `ranking`: scores, the total order of hits, `Hit` and its explanation
  (the ``recall`` ranking: cosine × confidence × decay weight).
- `relevance` (with `bm25`, `bm25_build` and `stemming`): the ``relevance``
  ranking, BM25F over every text field with stems, stopwords, typos and
  completions (a whole vault's index built in bulk, half in a worker);
  `embeddings`: meaning-based matching (the optional ``semantic`` extra),
  fused into relevance by reciprocal rank fusion.
- `similar`: more like this (TF-IDF or stored vectors), which `index_similar`
  gives the index as methods; `duplicates`: near duplicate groups.
- `index_cache`: the app's built index kept between runs (a checked pickle).
- `persisted` (with `persisted_rows`, `persisted_files`, `stored_terms`,
  `stored_memories`, `stored_refs`, `title_slots`): the index in SQLite,
  updated in place, that `memlens search` queries; `fresh`: serving it
  without opening the catalog when nothing changed (a stat walk against the
  index's manifest); `keys`: how both saved forms are named and invalidated.
"""
