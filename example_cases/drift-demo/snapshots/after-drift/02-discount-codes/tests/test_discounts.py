from datetime import date
from decimal import Decimal

import pytest

from discounts import DiscountCode, DiscountError, apply_discount

TODAY = date(2026, 3, 15)
CODES = [
    DiscountCode("SPRING10", expires_on=date(2026, 4, 30), percent=Decimal(10)),
    DiscountCode("WELCOME5", expires_on=date(2026, 12, 31), amount=Decimal("5.00")),
    DiscountCode("XMAS25", expires_on=date(2025, 12, 31), percent=Decimal(25)),
]


def test_percentage_code() -> None:
    assert apply_discount(Decimal("80.00"), "SPRING10", TODAY, CODES) == Decimal("72.00")


def test_fixed_amount_code_never_goes_below_zero() -> None:
    assert apply_discount(Decimal("20.00"), "WELCOME5", TODAY, CODES) == Decimal("15.00")
    assert apply_discount(Decimal("3.00"), "WELCOME5", TODAY, CODES) == Decimal("0.00")


def test_rounds_to_cents_half_up() -> None:
    assert apply_discount(Decimal("10.05"), "SPRING10", TODAY, CODES) == Decimal("9.05")


def test_unknown_code_is_rejected() -> None:
    with pytest.raises(DiscountError, match="unknown discount code"):
        apply_discount(Decimal("10.00"), "FREESTUFF", TODAY, CODES)


def test_expired_code_is_rejected() -> None:
    with pytest.raises(DiscountError, match="expired"):
        apply_discount(Decimal("10.00"), "XMAS25", TODAY, CODES)


def test_codes_are_case_insensitive() -> None:
    assert apply_discount(Decimal("80.00"), " spring10 ", TODAY, CODES) == Decimal("72.00")
