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


def find_code(codes: list[DiscountCode], code: str, today: date) -> DiscountCode:
    wanted = code.strip().upper()
    for discount in codes:
        if discount.code.upper() == wanted:
            if today > discount.expires_on:
                raise DiscountError(
                    f"discount code {discount.code} expired on {discount.expires_on}"
                )
            return discount
    logger.info("rejected unknown discount code %r", code)
    raise DiscountError(f"unknown discount code {code!r}")


def apply_discount(
    subtotal: Decimal, code: str, today: date, codes: list[DiscountCode]
) -> Decimal:
    discount = find_code(codes, code, today)
    if discount.percent is not None:
        reduced = subtotal * (Decimal(100) - discount.percent) / Decimal(100)
    else:
        reduced = subtotal - (discount.amount or Decimal(0))
    return max(reduced, Decimal(0)).quantize(CENT, rounding=ROUND_HALF_UP)
