from decimal import Decimal

import pytest

from order_service import OrderLine, OrderService, OrderValidationError


@pytest.fixture
def service() -> OrderService:
    return OrderService()


@pytest.mark.ac
def test_create_order_computes_total(service: OrderService) -> None:
    order = service.create_order(
        "cust-1",
        [OrderLine("BOOK-1", 2, Decimal("12.50")), OrderLine("PEN-3", 1, Decimal("1.99"))],
    )
    assert order.total == Decimal("26.99")


@pytest.mark.ac
def test_get_order_returns_created_order(service: OrderService) -> None:
    order = service.create_order("cust-1", [OrderLine("BOOK-1", 1, Decimal("12.50"))])
    assert service.get_order(order.id) is order


@pytest.mark.ac
@pytest.mark.parametrize(
    ("customer_id", "lines", "message"),
    [
        ("", [OrderLine("BOOK-1", 1, Decimal("1"))], "customer_id is required"),
        ("cust-1", [], "at least one line"),
        ("cust-1", [OrderLine("BOOK-1", 0, Decimal("1"))], "quantity must be positive"),
        ("cust-1", [OrderLine("BOOK-1", 1, Decimal("-1"))], "must not be negative"),
    ],
)
def test_invalid_orders_are_rejected(
    service: OrderService, customer_id: str, lines: list[OrderLine], message: str
) -> None:
    with pytest.raises(OrderValidationError, match=message):
        service.create_order(customer_id, lines)


def test_unknown_order_id(service: OrderService) -> None:
    with pytest.raises(OrderValidationError, match="unknown order 42"):
        service.get_order(42)
