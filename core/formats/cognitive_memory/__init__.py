"""Cognitive memory: typed markdown memories in a graph, with access-driven decay.

`adapter` holds `CognitiveMemoryAdapter`, which detects, scans, links and
decays a vault through the modules beside it: `detection` (the layout a
vault is recognised by), `schema` (folders, files, type
folders, relation types, frontmatter fields, problem reports), `memories`
(memory files validated into memories), `state` (`_state.json` and
`_index.json`, read leniently), `episodes` (daily session logs and their
links), `linking` (scan order, relations resolved, access state applied, and
`relink` of a few changed files) and `decay` (the score, its bands and its
explanation).  Writing: `writer` holds `CognitiveMemoryWriter` and its
registration, helped by `write_values`; the maintenance runs are `runs`
(shared helpers, `_index.json`, CORE.md), `runs_reflection` (REFLECTION.md)
and `runs_state` (decay scores and access counts in `_state.json`).
`core_file` lays out CORE.md (what it holds and what its budget cuts) and
`preview` shows what the agent loads at session start.
`curate` plans the review queue's merge and supersede (steps the writer returns).
"""
