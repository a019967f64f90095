"""Reading vaults: finding them, scanning their files, and keeping up with changes.

`vault`: vaults, the catalog and rescans; `cache`/`stored`: the scan rows a
warm start reads back; `changes` and `memory_diff`: what a rescan changed (per
memory and problem for a list, per memory object for an index); `watch*`:
live reload; `walk_ahead`: the stat walk of a warm start, in a second process.
"""
