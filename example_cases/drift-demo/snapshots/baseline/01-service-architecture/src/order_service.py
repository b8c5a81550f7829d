"""Orders: creating orders and looking them up."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from decimal import Decimal

logger = logging.getLogger(__name__)


class OrderValidationError(ValueError):
    """An order request that cannot be accepted."""


@dataclass(frozen=True)
class OrderLine:
    sku: str
    quantity: int
    unit_price: Decimal


@dataclass
class Order:
    id: int
    customer_id: str
    lines: list[OrderLine] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        return sum((line.unit_price * line.quantity for line in self.lines), Decimal("0"))


class OrderService:
    """Creates and looks up orders. All input validation happens here."""

    def __init__(self) -> None:
        self._orders: dict[int, Order] = {}
        self._next_id = 1

    def create_order(self, customer_id: str, lines: list[OrderLine]) -> Order:
        self._validate(customer_id, lines)
        order = Order(id=self._next_id, customer_id=customer_id, lines=list(lines))
        self._orders[order.id] = order
        self._next_id += 1
        logger.info("created order %s for customer %s", order.id, customer_id)
        return order

    def get_order(self, order_id: int) -> Order:
        try:
            return self._orders[order_id]
        except KeyError:
            raise OrderValidationError(f"unknown order {order_id}") from None

    def _validate(self, customer_id: str, lines: list[OrderLine]) -> None:
        if not customer_id:
            raise OrderValidationError("customer_id is required")
        if not lines:
            raise OrderValidationError("an order needs at least one line")
        for line in lines:
            if line.quantity <= 0:
                raise OrderValidationError(f"{line.sku}: quantity must be positive")
            if line.unit_price < 0:
                raise OrderValidationError(f"{line.sku}: unit price must not be negative")
