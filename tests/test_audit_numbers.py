"""One number format per quantity (issue 43 item 5): :func:`coopsched.audit.numbers.number`."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from coopsched.audit.numbers import LARGE, SMALL, number


def test_known_values():
    assert number(8606.2, 3) == "8,606"  # the whole part stays whole
    assert number(-8606.2, 3, signed=True) == "-8,606"
    assert number(8.534, 3, signed=True) == "+8.53"
    assert number(0.0021044, 3) == "0.0021"  # trailing zeros dropped
    assert number(1.029e13, 4) == "1.029e+13"
    assert number(2.1e-5, 2) == "2.1e-05" and number(4.88e-4, 3, signed=True) == "+0.000488"
    assert number(1073.0, 4) == "1,073" and number(683.25, 4) == "683.2"
    assert number(0) == "0" and number(None) == "—" and number(float("nan")) == "—"
    assert number(999_999.4, 4) == "999,999" and number(1_234_567, 4) == "1.235e+06"


@given(
    st.floats(min_value=-1e18, max_value=1e18, allow_nan=False, allow_infinity=False),
    st.integers(2, 6),
    st.booleans(),
)
def test_a_number_reads_back_to_its_digits_and_uses_an_exponent_only_out_of_range(
    x, digits, signed
):
    text = number(x, digits, signed=signed)
    if x == 0:
        assert text == "0"
        return
    size = abs(x)
    scientific = "e" in text
    assert scientific == (size >= LARGE or size < SMALL), text
    back = float(text.replace(",", ""))
    assert math.isclose(back, x, rel_tol=0.5 * 10 ** (1 - digits) + 1e-12), (x, text)
    assert text.startswith("+") == (signed and x > 0)
    if not scientific:
        whole = text.lstrip("+-").split(".")[0]
        assert whole == f"{int(whole.replace(',', '')):,}"  # separators every 3 digits
