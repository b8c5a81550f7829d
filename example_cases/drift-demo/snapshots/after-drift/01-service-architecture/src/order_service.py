"""Orders: creating orders and looking them up."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import count

logger = logging.getLogger(__name__)


class OrderValidationError(ValueError):
    """An order request that cannot be accepted."""


@dataclass(frozen=True)
class OrderLine:
    sku: str
    quantity: int
    unit_price: Decimal

    def __post_init__(self) -> None:
        if self.quantity <= 0:
            raise OrderValidationError(f"{self.sku}: quantity must be positive")
        if self.unit_price < 0:
            raise OrderValidationError(f"{self.sku}: unit price must not be negative")


@dataclass
class Order:
    id: int
    customer_id: str
    lines: list[OrderLine] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return sum((line.unit_price * line.quantity for line in self.lines), Decimal("0"))


_orders: dict[int, Order] = {}
_ids = count(1)


def create_order(customer_id: str, lines: list[OrderLine]) -> Order:
    if not customer_id:
        raise OrderValidationError("customer_id is required")
    if not lines:
        raise OrderValidationError("an order needs at least one line")
    order = Order(id=next(_ids), customer_id=customer_id, lines=list(lines))
    _orders[order.id] = order
    logger.info("created order %s for customer %s", order.id, customer_id)
    return order


def get_order(order_id: int) -> Order:
    try:
        return _orders[order_id]
    except KeyError:
        raise OrderValidationError(f"unknown order {order_id}") from None
