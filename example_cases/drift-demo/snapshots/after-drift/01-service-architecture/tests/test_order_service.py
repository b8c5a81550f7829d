from decimal import Decimal

import pytest

from order_service import OrderLine, OrderValidationError, create_order, get_order


def test_create_order_computes_total() -> None:
    order = create_order(
        "cust-1",
        [OrderLine("BOOK-1", 2, Decimal("12.50")), OrderLine("PEN-3", 1, Decimal("1.99"))],
    )
    assert order.total == Decimal("26.99")


def test_get_order_returns_created_order() -> None:
    order = create_order("cust-1", [OrderLine("BOOK-1", 1, Decimal("12.50"))])
    assert get_order(order.id) is order


def test_order_without_customer_is_rejected() -> None:
    with pytest.raises(OrderValidationError, match="customer_id is required"):
        create_order("", [OrderLine("BOOK-1", 1, Decimal("1"))])


def test_order_without_lines_is_rejected() -> None:
    with pytest.raises(OrderValidationError, match="at least one line"):
        create_order("cust-1", [])


@pytest.mark.parametrize(
    ("quantity", "price", "message"),
    [(0, Decimal("1"), "quantity must be positive"), (1, Decimal("-1"), "must not be negative")],
)
def test_invalid_lines_are_rejected(quantity: int, price: Decimal, message: str) -> None:
    with pytest.raises(OrderValidationError, match=message):
        OrderLine("BOOK-1", quantity, price)


def test_unknown_order_id() -> None:
    with pytest.raises(OrderValidationError, match="unknown order 4242"):
        get_order(4242)
