"""The one check of a number given as an option (a timeout, a limit, a count, a policy's
delay), made where the value is made: the constructor of a policy or a transport, ``Client()``
and its setters, a call's ``timeout=``.

A number that is not one is refused by name, before anything uses it: NaN (every comparison
with it is false, so ``CircuitBreaker(cool_down=nan)`` stayed open forever), an infinity where
none makes sense, a bool (``True`` is an ``int`` to Python, not a count to a reader), a string,
and a fraction where a whole number is meant. A wrong type is a ``TypeError``, a wrong value a
``ValueError``; each message names the option as ``what`` says it (``"CircuitBreaker:
threshold"``) and shows the value.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import overload

__all__ = ["call_timeout", "number", "whole"]


def number(
    value: object,
    what: str,
    *,
    minimum: float = 0.0,
    positive: bool = False,
    maximum: float = math.inf,
    infinite: bool = False,
) -> float:
    """``value`` as a float, if it is a real number from ``minimum`` (above 0 when
    ``positive``) to ``maximum``; ``infinite`` lets ``math.inf`` through (a timeout that never
    ends)."""
    # float and int before the ABC, whose check costs a microsecond (a call's timeout is checked)
    if isinstance(value, bool) or not isinstance(value, (float, int, Real)):
        raise TypeError(f"{what} must be a number, not {value!r}")
    result = float(value)
    if math.isnan(result):
        raise ValueError(f"{what} must be a number, not NaN")
    if math.isinf(result) and not (infinite and result > 0):
        raise ValueError(f"{what} must be finite, not {result}")
    if positive and result <= 0:
        raise ValueError(f"{what} must be more than 0, not {value!r}")
    if result < minimum:
        raise ValueError(f"{what} must be at least {minimum:g}, not {value!r}")
    if result > maximum:
        raise ValueError(f"{what} must be at most {maximum:g}, not {value!r}")
    return result


def whole(value: object, what: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    """``value`` as an int, if it is a whole number (not a float, even ``3.0``, nor a bool)
    from ``minimum`` to ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, (int, Integral)):
        raise TypeError(f"{what} must be a whole number, not {value!r}")
    result = int(value)
    if result < minimum:
        raise ValueError(f"{what} must be at least {minimum}, not {result}")
    if maximum is not None and result > maximum:
        raise ValueError(f"{what} must be at most {maximum}, not {result}")
    return result


@overload
def call_timeout(value: float, what: str) -> float: ...
@overload
def call_timeout(value: float | None, what: str) -> float | None: ...
def call_timeout(value: float | None, what: str) -> float | None:
    """A call's ``timeout=`` (``what`` names the call): None (the default), or seconds from 0
    to ``math.inf`` (no limit)."""
    return None if value is None else number(value, f"{what}: timeout", infinite=True)
