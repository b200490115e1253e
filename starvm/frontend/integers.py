"""Star integers are unbounded: decimal text to int and back, exactly, at any length.

Python refuses ``int(text)`` and ``str(n)`` beyond 4300 digits (``sys.int_info.
str_digits_check_threshold``), a guard against slow conversions of untrusted input. Star
code may print 2^20000, and a program may write such a literal: these conversions split
long numbers into parts below the limit instead of lifting it for the whole process (an
embedding's other users of Python keep their guard).
"""
from __future__ import annotations

import contextlib
import sys

_SAFE_DIGITS = 4000      # below Python's limit (4300): converted directly
_SAFE_BITS = 13_000      # 2^13000 has 3914 digits


def int_of_decimal(text: str) -> int:
    """The int a string of decimal digits (no sign) denotes."""
    if len(text) <= _SAFE_DIGITS:
        return int(text)
    low = len(text) // 2
    return int_of_decimal(text[:-low]) * 10 ** low + int_of_decimal(text[-low:])


def decimal_of_int(n: int) -> str:
    """``str(n)`` for an int of any size."""
    if n.bit_length() <= _SAFE_BITS:
        return str(n)
    if n < 0:
        return "-" + decimal_of_int(-n)
    digits = int(n.bit_length() * 0.30103) // 2      # about half the digits go to the low part
    high, low = divmod(n, 10 ** digits)
    return decimal_of_int(high) + decimal_of_int(low).zfill(digits)


@contextlib.contextmanager
def any_length():
    """While Star code runs (Machine._guard): messages and output that format its integers
    (an index of 5000 digits out of range) convert them at any length; the limit comes back
    afterwards, as the recursion limit does."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)
