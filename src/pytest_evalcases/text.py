"""Small text helpers shared by every report: counts with plurals, percentages, money;
and the numbers that options take."""

from __future__ import annotations

import argparse
import math


def plural(count: int, noun: str) -> str:
    """``1 case``, ``2 cases``: the count and the noun, plural when it is not one."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def check_label(check_id: str, check_type: str) -> str:
    """A check as result lines name it: its id, then its type in brackets unless the two
    are the same word (``no-force-push [command_not_run]``, ``max_cost``)."""
    return check_id if check_id == check_type else f"{check_id} [{check_type}]"


def percent(rate: float | None, digits: int = 1) -> str:
    """``97.5%`` (``digits`` after the point), or ``n/a`` when there is no rate."""
    return "n/a" if rate is None else f"{rate:.{digits}%}"


def ratio(passed: int, total: int) -> str:
    """``passed / total`` as a whole percentage, or ``n/a`` when ``total`` is 0."""
    return percent(passed / total, 0) if total else "n/a"


def usd(value: float | None) -> str:
    """``$0.0123``, or ``n/a``."""
    return "n/a" if value is None else f"${value:.4f}"


def non_negative_int(value: str) -> int:
    """An argparse ``type=``: a whole number >= 0, quoting a bad value."""
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value!r}")
    return number


def positive_int(value: str) -> int:
    """An argparse ``type=``: a whole number >= 1, quoting a bad value."""
    number = non_negative_int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


def usd_amount(value: str) -> float:
    """An argparse ``type=``: dollars above 0, a leading ``$`` allowed (``--eval-budget``)."""
    try:
        amount = float(value.strip().removeprefix("$"))
    except ValueError:
        amount = 0.0
    if not math.isfinite(amount) or amount <= 0:
        raise argparse.ArgumentTypeError(f"expected an amount of USD > 0, got {value!r}")
    return amount


def tagged(option: str) -> type:
    """An argparse ``type=`` that keeps which option gave the value."""

    def tag(value: str) -> tuple[str, str]:
        return option, value

    return tag  # type: ignore[return-value]


def name_value(option: str) -> type:
    """An argparse ``type=`` for ``[NAME=]VALUE``, quoting the bad value."""

    def parse(value: str) -> tuple[str, str]:
        name, sep, rest = value.partition("=")
        if not sep:
            return "", value
        if not name or not rest:
            raise argparse.ArgumentTypeError(f"{option} expects [NAME=]VALUE, got {value!r}")
        return name, rest

    return parse  # type: ignore[return-value]


def positive_seconds(value: str) -> float:
    """An argparse ``type=``: a number of seconds above 0, quoting a bad value."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {value!r}")
    return number
