"""Discount codes applied to an order subtotal at checkout."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

logger = logging.getLogger(__name__)

CENT = Decimal("0.01")


class DiscountError(ValueError):
    """A discount code that cannot be applied."""


@dataclass(frozen=True)
class DiscountCode:
    code: str
    expires_on: date
    percent: Decimal | None = None
    amount: Decimal | None = None


class DiscountService:
    """Looks up discount codes and applies them to a subtotal."""

    def __init__(self, codes: list[DiscountCode]) -> None:
        self._codes = {c.code.upper(): c for c in codes}

    def apply(self, subtotal: Decimal, code: str, today: date) -> Decimal:
        discount = self._validate(code, today)
        if discount.percent is not None:
            reduced = subtotal * (Decimal(100) - discount.percent) / Decimal(100)
        else:
            reduced = subtotal - (discount.amount or Decimal(0))
        return max(reduced, Decimal(0)).quantize(CENT, rounding=ROUND_HALF_UP)

    def _validate(self, code: str, today: date) -> DiscountCode:
        discount = self._codes.get(code.strip().upper())
        if discount is None:
            logger.info("rejected unknown discount code %r", code)
            raise DiscountError(f"unknown discount code {code!r}")
        if today > discount.expires_on:
            raise DiscountError(f"discount code {discount.code} expired on {discount.expires_on}")
        if (discount.percent is None) == (discount.amount is None):
            raise DiscountError(f"discount code {discount.code} needs a percent or an amount")
        return discount
