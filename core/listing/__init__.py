"""The memory list, modelled in core: precomputed rows, filter as you type, sort, window.

The app shows up to 100k memories.  Holding a widget per memory, or a
DataTable row per memory, is far too slow, so the list is modelled here and
the app draws only the visible window (`rows[start:stop]`).

Map of the package:

- `rows`: `MemoryRow` (one per memory or invalid item, computed once per
  `as_of`) and how rows are made from vaults.
- `query`: the columns, sort keys and filter words.
- `memory_list`: `MemoryList`, sorted and filtered index lists over the rows,
  patched in place by `update`.
- `triage`: urgency groups, health counts, strength histogram, forecast.
- `problems`: invalid items and flagged references as one list.
"""

from .memory_list import (
    MemoryList,
)
from .problems import (
    ProblemEntry,
    problem_entries,
)
from .query import (
    COLUMNS,
    FILTER_FIELDS,
    SORT_KEYS,
    Column,
    Term,
    narrows,
    parse_query,
    sort_key,
)
from .rows import (
    CONFIDENCE_WORDS,
    HEALTH_RANK,
    INVALID,
    MemoryRow,
    memory_row,
    problem_row,
    rows_for_vault,
    rows_for_vaults,
)
from .triage import (
    TRIAGE_ORDERS,
    forecast_rows,
    health_counts,
    strength_first_key,
    strength_histogram,
    triage_groups,
    triage_key,
)

__all__ = [
    "COLUMNS",
    "CONFIDENCE_WORDS",
    "FILTER_FIELDS",
    "HEALTH_RANK",
    "INVALID",
    "SORT_KEYS",
    "TRIAGE_ORDERS",
    "Column",
    "MemoryList",
    "MemoryRow",
    "ProblemEntry",
    "Term",
    "forecast_rows",
    "health_counts",
    "memory_row",
    "narrows",
    "parse_query",
    "problem_entries",
    "problem_row",
    "rows_for_vault",
    "rows_for_vaults",
    "sort_key",
    "strength_first_key",
    "strength_histogram",
    "triage_groups",
    "triage_key",
]
