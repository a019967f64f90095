"""Equal values as one object (core/listing/sharing.py): only where equal means the same."""

from __future__ import annotations

import math
from datetime import date

from memlens.core.listing.sharing import shared


def test_equal_strings_tuples_and_dates_become_one_object() -> None:
    a, b = "".join(["sol", "ution"]), "".join(["solu", "tion"])
    assert a is not b
    out = shared([a, b, ("x", "y"), ("x", "y"), ("y",), date(2026, 1, 2), date(2026, 1, 2)])
    assert out == [a, b, ("x", "y"), ("x", "y"), ("y",), date(2026, 1, 2), date(2026, 1, 2)]
    assert out[0] is out[1]
    assert out[2] is out[3]
    assert out[4][0] is out[2][1]  # an item of one tuple is the same string in another
    assert out[5] is out[6]


def test_values_of_different_types_or_signs_stay_apart() -> None:
    values: list[object] = [1, 1.0, True, 0.0, -0.0, 0, False, (1, -0.0), (1, 0.0), (True, 2.0)]
    values.append((1, 2.0))
    out = shared(values)
    assert [repr(v) for v in out] == [repr(v) for v in values]
    assert [type(v) for v in out] == [type(v) for v in values]
    assert out[10] is not out[9]


def test_nan_is_never_taken_for_another_nan() -> None:
    first, second = float("nan"), float("nan")
    out = shared([first, second, (1, first), (1, second)])
    assert out[0] is first and out[1] is second
    assert all(math.isnan(v) for v in out[:2])
    assert out[2] is not out[3]
