"""observation/v1: markdown documents with YAML frontmatter, observations and comprehensions.

`adapter` holds `ObservationV1Adapter`, which detects, scans, links and
decays a vault through the modules beside it: `schema` (folders, kinds, the
two specs' fields, confidence levels, pointer fields), `detection` (the
markers a vault is recognised by), `documents` (a document read into a
memory), `validation` (the field checks behind it) and `linking`
(citations, prior beliefs, `incorporated_by`, and `relink` of a few changed
documents).  Writing: `writer` holds `ObservationV1Writer`, its registration
and `plan_promote_many`, helped by `write_files` (documents as read, write
and move plans), `write_fields` (frontmatter edits) and `write_promote` (a
new comprehension citing observations).
`preview` lists the comprehension documents an agent loads and what each
incorporates.
`curate` plans the review queue's merge and supersede (steps the writer returns).
"""
