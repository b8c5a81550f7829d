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


def refuse(order: PaidOrder, reason: str) -> RefundRefused:
    logger.warning("refund for order %s refused: %s", order.id, reason)
    return RefundRefused(order.id, reason)


def refund_amount(order: PaidOrder, today: date, skus: list[str] | None = None) -> Decimal:
    if order.delivered_on is None:
        raise refuse(order, "the order has not been delivered")
    if today - order.delivered_on > REFUND_WINDOW:
        raise refuse(order, f"delivered on {order.delivered_on}, more than 30 days ago")
    lines = {line.sku: line for line in order.lines}
    wanted = list(lines) if skus is None else skus
    unknown = [sku for sku in wanted if sku not in lines]
    if unknown:
        raise refuse(order, f"not part of the order: {', '.join(unknown)}")
    return sum((lines[sku].amount_paid for sku in wanted), Decimal("0"))
