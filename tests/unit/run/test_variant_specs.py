"""``--eval-variant NAME=KEY:VALUE,...`` as parsed (docs/variants.md)."""

from __future__ import annotations

import pytest

from pytest_evalcases.errors import UsageError
from pytest_evalcases.run.variants import VariantSpec, parse_spec, parse_variant


def test_every_key() -> None:
    spec = parse_variant("cx=agent:codex, model:gpt-5,args:-c 'a=b' --x,config:git:main:rules/")

    assert spec == VariantSpec(
        "cx", "git:main:rules/", agent="codex", model="gpt-5", args=("-c", "a=b", "--x")
    )


def test_keys_left_out_are_none_and_a_comma_inside_a_value_stays() -> None:
    assert parse_variant("a=model:m1") == VariantSpec("a", None, model="m1")
    assert parse_variant("a=args:--tags a,b") == VariantSpec("a", None, args=("--tags", "a,b"))
    assert parse_variant("a=args:") == VariantSpec("a", None, args=())


def test_eval_config_is_the_shorthand_of_a_config_variant() -> None:
    assert parse_spec("pr=git:main") == parse_variant("pr=config:git:main")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("cx", "--eval-variant expects NAME=KEY:VALUE[,KEY:VALUE...], got 'cx'"),
        ("=agent:codex", "expects NAME=KEY:VALUE"),
        ("cx=", "expects NAME=KEY:VALUE"),
        ("c x=agent:codex", "the name 'c x' must be letters"),
        ("cx=codex", "--eval-variant 'cx=codex': expected KEY:VALUE, got 'codex'"),
        ("cx=modle:gpt-5", "unknown key 'modle' (the keys are agent, model, args, config)"),
        ("cx=agent:codex,agent:claude", "the key 'agent' is given twice"),
        ("cx=model:", "--eval-variant 'cx=model:': model: needs a value"),
        ("cx=args:'unclosed", "args: cannot be split as a shell would"),
    ],
)
def test_bad_values_are_usage_errors_quoting_the_option(value: str, said: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_variant(value)

    assert said in str(info.value)


def test_the_ini_origin_is_named() -> None:
    with pytest.raises(UsageError, match=r"^ini eval_variants 'x=foo:1': unknown key"):
        parse_variant("x=foo:1", "ini eval_variants")
