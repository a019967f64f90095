"""Type aliases shared by the search modules (kept apart so none imports a sibling for a name)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np
import numpy.typing as npt

from ..model import DecayInfo, Health, Memory

#: A memory's identity in an index: (vault root, id).
Key = tuple[str, str]
DecayFn = Callable[[Memory, date], DecayInfo]
#: What the index keeps of a decay: (status, health, weight, score).
Brief = tuple[str, Health, float, float | None]
IntArray = npt.NDArray[np.signedinteger[Any]]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
#: Rows ``start + i`` are ``(root, ids[i])``: a key table not built yet.
RowSegment = tuple[str, list[str], int]
