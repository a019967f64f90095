"""Project Ocean: agents' observation files with frontmatter, `[[backlinks]]` and decay specs.

`adapter` holds `ProjectOceanAdapter`, which detects, scans, links and
decays a vault through the modules beside it: `detection` (the folders a
vault is recognised by), `schema` (the format id, the
shared folder, the fields), `locations` (whose file, which area, the id its
path gives, the scan order), `observations` (a file read into a memory, by
its generation), `linking` (backlinks resolved as the format's scripts
resolve them, and `ref_by`), `decay` (first-generation decay specs and the
arithmetic, explained) and `decay2` (the second generation: importance,
max_age, freshness, the neglect penalty and the decay run's verdict).
Writing: `writer` holds `ProjectOceanWriter` and its registration, helped by
`write_files` (files as read, destinations, write and move plans) and
`write_fields` (what set and promote accept); `runs` holds the promote and
decay runs, `references` the second generation's references run
(memory-ref.py).  `recall` is memory-search.py's ranking (`search --rank
recall`, `--format ocean`), of either generation, on the values the script
reads: `script_view` reads a file the script's way (its line-by-line header,
not YAML) and `script_rules` holds its per-file rules (confidence, decay,
importance, freshness) and its JSON record; `preview` runs the HEARTBEAT
recall step for an agent and shows what shared/ adds.

Two generations live side by side, file by file.  The first (our spec):
`confidence` + `decay`.  The second (the repository's current scripts):
`importance` + `max_age`, with `refs`, `ref_by`, `verified`, `promoted`,
`promoted_from`, `promoted_at`.  Decisions where the scripts are silent,
ambiguous or buggy:

- Generation: `confidence` or `decay` → first; `importance` or `max_age` →
  second; one of each → invalid (`wrong_type`, "mixes ...").  Neither →
  first, "lacks confidence" (as before).  The second requires `importance`
  (0-1) and `max_age` (`Nd`, N ≥ 1, or `permanent`); `tags`, `created`,
  `source` are optional (the scripts default them: no created = age 0,
  freshness 1.0); `refs` a whole number ≥ 0, `ref_by` a list of strings.
- Neglect penalty never compounds: the decay run writes the current
  importance and the total penalty written so far in `neglect_penalty`;
  it subtracts only what is due beyond it.  Penalties already written stay
  when refs arrive (no refund).  The effective max age is judged by the
  importance before neglect (importance + neglect_penalty), as the script
  judges it before its penalty; so a second run on the same as_of changes
  nothing.
- Extension: max_age ×1.5 (whole days), repeated until the age is within
  the effective max age (the script extends once per daily run and gets
  there over the following days); so a second run finds nothing to extend.
- `review` is a status (health fading), reported by the run; nothing is
  written (the script writes nothing either).  `extend` is health active.
- A file the run archives is moved byte for byte (the script rewrites it
  with the penalty first); an existing file in archive/ refuses the move.
- Pinned second-generation files: no penalty, no archive, no extension
  (status permanent).
- Search (`--rank recall`): memory-search.py's TF-IDF exactly, importance as
  written (not the penalty due), importance < 0.1 not in the pool, score >
  0.001, ties in the script's load order.  Invalid files are not in the
  pool (the script would read them).  A first-generation file in a mixed
  vault counts for the idf, and scores by its own generation.  The default
  `relevance` ranking uses importance × freshness as the decay weight.
- Agents: the scripts list six (captain, scout, shield, hawk, forge,
  watchtower); memlens reads every agent folder, the six first in the
  scripts' order, then the others by name.  A second-generation backlink
  (a file name, `.md` optional, any name without path syntax) resolves in
  the first agent in that order holding it (memory-ref.py), for the graph too.
- References run: ref_by keeps its written order (the script's goes
  through a set: random order); a first-generation target is left
  unchanged (it has no importance); archives and shared/ are not read.
- Promote (second generation): importance ≥ --threshold (0.8), or verified
  and ≥ 0.6; `promoted: true` files are skipped; the copy is
  `shared/observations/<agent>-<file>` with promoted_from/promoted_at (=
  as_of) appended; the source gets `promoted: true` in the same plan.  An
  existing copy refuses (live or archived).  `memlens promote PATH ID`
  is the script's --force for one file.
path gives, the scan order), `observations` (a file read into a memory),
`linking` (backlinks resolved as the format's scripts resolve them) and
`decay` (decay specs and the arithmetic, explained).  Writing: `writer`
holds `ProjectOceanWriter` and its registration, helped by `write_files`
(files as read, destinations, write and move plans) and `write_fields` (what
set and promote accept); `runs` holds the promote and decay runs.
`preview` runs the HEARTBEAT recall step for an agent and shows what shared/
adds.
`curate` plans the review queue's merge and supersede (steps the writer returns).
"""
