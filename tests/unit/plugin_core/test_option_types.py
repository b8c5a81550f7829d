"""The options' argparse types (text.py) and plugin/stash.py's process checks, called
directly."""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_evalcases import text
from pytest_evalcases.plugin import stash


def test_name_value_splits_on_the_first_equals_sign() -> None:
    parse = text.name_value("--eval-workspace")

    assert parse("out/a") == ("", "out/a")
    assert parse("a=out/a=b") == ("a", "out/a=b")


@pytest.mark.parametrize("value", ["=dir", "name="])
def test_name_value_quotes_a_bad_value(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        text.name_value("--eval-workspace")(value)

    assert str(caught.value) == f"--eval-workspace expects [NAME=]VALUE, got {value!r}"


def test_whole_numbers() -> None:
    assert text.non_negative_int("0") == 0
    assert text.positive_int("3") == 3
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        text.positive_int("0")
    assert str(caught.value) == "expected a whole number >= 1, got '0'"
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        text.non_negative_int("two")
    assert str(caught.value) == "expected a whole number >= 0, got 'two'"


def config(**attrs: Any) -> Any:
    return SimpleNamespace(**attrs)


def test_worker_checks() -> None:
    controller = config()
    first = config(workerinput={"workerid": "gw0"})
    second = config(workerinput={"workerid": "gw1"})

    assert [stash.is_worker(c) for c in (controller, first, second)] == [False, True, True]
    assert [stash.is_first_worker_or_controller(c) for c in (controller, first, second)] == [
        True,
        True,
        False,
    ]
