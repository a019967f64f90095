"""Experience records: append-only JSON Lines stores of experiences, views, stances and a WAL.

`adapter` holds `ExperienceRecordAdapter`, which detects, scans, links and
decays a vault through the modules beside it: `detection` (the marker a
vault is recognised by), `schema` (file names, the type
lattice, spec keys, pointer fields, WAL ops and lenses), `jsonl` (strict JSON
Lines reading), `validation` (checks of every record kind), `records` (the
scan's working state and the memories built from experiences), `linking`
(the lattice check, references, and `relink` of appended experiences) and
`action_records` (the WAL ops and views memlens's actions append).  Writing:
`writer` holds `ExperienceRecordWriter` and its registration, helped by
`write_lines` (stores as read, lines appended in each file's style) and
`write_fields` (what set and promote accept).
`retrieval` is the spec's hybrid retrieval, computed offline, and `preview`
shows it for a prompt with the lenses and stances on each hit.  Privacy:
`privacy` reads what an erased record's raw line still holds (for the
secrets scan), `write_redact` plans redaction (tombstone, optional upward
record) and erasure.  `bodies` reads one experience's text from its own
line (a search hit in a file of thousands of records).
`curate` plans the review queue's merge and supersede (steps the writer returns).
"""
