import logging
from datetime import date
from decimal import Decimal

import pytest

from refunds import PaidLine, PaidOrder, RefundRefused, refund_amount

ORDER = PaidOrder(
    id="ord-7",
    lines=(PaidLine("BOOK-1", Decimal("25.00")), PaidLine("PEN-3", Decimal("1.99"))),
    delivered_on=date(2026, 3, 1),
)


def test_full_refund_within_30_days() -> None:
    assert refund_amount(ORDER, today=date(2026, 3, 31)) == Decimal("26.99")


def test_partial_refund_for_some_lines() -> None:
    assert refund_amount(ORDER, today=date(2026, 3, 10), skus=["PEN-3"]) == Decimal("1.99")


def test_no_refund_after_30_days(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), pytest.raises(RefundRefused, match="more than 30 days"):
        refund_amount(ORDER, today=date(2026, 4, 1))
    assert "ord-7 refused" in caplog.text


def test_no_refund_before_delivery() -> None:
    undelivered = PaidOrder(id="ord-8", lines=ORDER.lines, delivered_on=None)
    with pytest.raises(RefundRefused, match="not been delivered"):
        refund_amount(undelivered, today=date(2026, 3, 2))


def test_unknown_sku_is_refused() -> None:
    with pytest.raises(RefundRefused, match="not part of the order: MUG-2"):
        refund_amount(ORDER, today=date(2026, 3, 2), skus=["MUG-2"])
