"""Dream Cycle (Total Recall): `observations.md` sections tagged by `<!-- dc:... -->` comments.

`adapter` holds `DreamCycleAdapter`, which detects, scans, links and decays a
vault through the modules beside it (`detection`: the markers a vault is
recognised by, asked before the adapter is imported).  Reading: `files` (the vault's files and
problem reports), `sections` (`## ` sections and dc comments from text),
`reading` (bytes decoded a section at a time and made memories), `ids`
(heading-derived ids and titles), `classify` (the seven types and the content
rules), `validation` (dc field checks), `archive` (archive.jsonl entries and
restore markers), `rescan` (re-reading only the sections a change touched),
`linking` (what a changed file replaces in the linked result) and `decay`.
Writing: `writer` holds `DreamCycleWriter` and its registration, helped by
`write_files` (files as byte lines, the state a plan checks), `write_fields`
(dc comment edits), `write_promote`, `write_archive`, `write_restore` and
`write_version` (an earlier version of a section put back, for history);
`runs` holds the decay run and the type distribution.
`preview` shows the observations as the agent loads them and what decays out
within 7 and 30 days.  `history` says where a section or an archive entry is
in each version of its file in git history.  Privacy: `privacy` says where
each text of a memory sits in the file (for the secrets scan), `write_redact`
redacts a section.  `bodies` reads one section's body from its own lines
(a search hit in a file of thousands of sections).
`curate` plans the review queue's merge and supersede (steps the writer returns).
"""
