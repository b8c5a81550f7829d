from datetime import date
from decimal import Decimal

import pytest

from discounts import DiscountCode, DiscountError, DiscountService

TODAY = date(2026, 3, 15)


@pytest.fixture
def service() -> DiscountService:
    return DiscountService(
        [
            DiscountCode("SPRING10", expires_on=date(2026, 4, 30), percent=Decimal(10)),
            DiscountCode("WELCOME5", expires_on=date(2026, 12, 31), amount=Decimal("5.00")),
            DiscountCode("XMAS25", expires_on=date(2025, 12, 31), percent=Decimal(25)),
        ]
    )


@pytest.mark.ac
def test_percentage_code(service: DiscountService) -> None:
    assert service.apply(Decimal("80.00"), "SPRING10", TODAY) == Decimal("72.00")


@pytest.mark.ac
def test_fixed_amount_code_never_goes_below_zero(service: DiscountService) -> None:
    assert service.apply(Decimal("20.00"), "WELCOME5", TODAY) == Decimal("15.00")
    assert service.apply(Decimal("3.00"), "WELCOME5", TODAY) == Decimal("0.00")


@pytest.mark.ac
def test_rounds_to_cents_half_up(service: DiscountService) -> None:
    assert service.apply(Decimal("0.05"), "SPRING10", TODAY) == Decimal("0.05")
    assert service.apply(Decimal("10.05"), "SPRING10", TODAY) == Decimal("9.05")


@pytest.mark.ac
def test_unknown_code_is_rejected(service: DiscountService) -> None:
    with pytest.raises(DiscountError, match="unknown discount code"):
        service.apply(Decimal("10.00"), "FREESTUFF", TODAY)


@pytest.mark.ac
def test_expired_code_is_rejected(service: DiscountService) -> None:
    with pytest.raises(DiscountError, match="expired"):
        service.apply(Decimal("10.00"), "XMAS25", TODAY)


def test_codes_are_case_insensitive(service: DiscountService) -> None:
    assert service.apply(Decimal("80.00"), " spring10 ", TODAY) == Decimal("72.00")
