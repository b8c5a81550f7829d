"""Refunds: how much a customer gets back for returned order lines."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

logger = logging.getLogger(__name__)

REFUND_WINDOW = timedelta(days=30)


class RefundRefused(Exception):
    """A refund request that is not granted; ``reason`` says why."""

    def __init__(self, order_id: str, reason: str) -> None:
        super().__init__(f"refund for order {order_id} refused: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class PaidLine:
    sku: str
    amount_paid: Decimal


@dataclass(frozen=True)
class PaidOrder:
    id: str
    lines: tuple[PaidLine, ...]
    delivered_on: date | None


class RefundService:
    """Decides refunds under the 30-day policy."""

    def refund(self, order: PaidOrder, today: date, skus: list[str] | None = None) -> Decimal:
        returned = self._validate(order, today, skus)
        return sum((line.amount_paid for line in returned), Decimal("0"))

    def _validate(
        self, order: PaidOrder, today: date, skus: list[str] | None
    ) -> list[PaidLine]:
        if order.delivered_on is None:
            self._refuse(order, "the order has not been delivered")
        elif today - order.delivered_on > REFUND_WINDOW:
            self._refuse(order, f"delivered on {order.delivered_on}, more than 30 days ago")
        if skus is None:
            return list(order.lines)
        by_sku = {line.sku: line for line in order.lines}
        unknown = [sku for sku in skus if sku not in by_sku]
        if unknown:
            self._refuse(order, f"not part of the order: {', '.join(unknown)}")
        return [by_sku[sku] for sku in skus]

    def _refuse(self, order: PaidOrder, reason: str) -> None:
        logger.warning("refund for order %s refused: %s", order.id, reason)
        raise RefundRefused(order.id, reason)
