import logging
from datetime import date
from decimal import Decimal

import pytest

from refunds import PaidLine, PaidOrder, RefundRefused, RefundService

ORDER = PaidOrder(
    id="ord-7",
    lines=(PaidLine("BOOK-1", Decimal("25.00")), PaidLine("PEN-3", Decimal("1.99"))),
    delivered_on=date(2026, 3, 1),
)


@pytest.fixture
def service() -> RefundService:
    return RefundService()


@pytest.mark.ac
def test_full_refund_within_30_days(service: RefundService) -> None:
    assert service.refund(ORDER, today=date(2026, 3, 31)) == Decimal("26.99")


@pytest.mark.ac
def test_partial_refund_for_some_lines(service: RefundService) -> None:
    assert service.refund(ORDER, today=date(2026, 3, 10), skus=["PEN-3"]) == Decimal("1.99")


@pytest.mark.ac
def test_no_refund_after_30_days(service: RefundService, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), pytest.raises(RefundRefused, match="more than 30 days"):
        service.refund(ORDER, today=date(2026, 4, 1))
    assert "ord-7 refused" in caplog.text


@pytest.mark.ac
def test_no_refund_before_delivery(service: RefundService) -> None:
    undelivered = PaidOrder(id="ord-8", lines=ORDER.lines, delivered_on=None)
    with pytest.raises(RefundRefused, match="not been delivered"):
        service.refund(undelivered, today=date(2026, 3, 2))


def test_unknown_sku_is_refused(service: RefundService) -> None:
    with pytest.raises(RefundRefused, match="not part of the order: MUG-2"):
        service.refund(ORDER, today=date(2026, 3, 2), skus=["MUG-2"])
