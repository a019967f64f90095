"""Project Ocean: agents' observation files with frontmatter, `[[backlinks]]` and decay specs.

`adapter` holds `ProjectOceanAdapter`, which detects, scans, links and
decays a vault through the modules beside it: `schema` (the format id, the
shared folder, the fields), `locations` (whose file, which area, the id its
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
