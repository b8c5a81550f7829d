"""A passing case's report lists each check with its result, as a report section:
shown in the PASSES section under ``-rP`` / ``-rA`` and in JUnit's ``system-out``, never
in the default output (docs/writing-cases.md)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.helpers.suite import SuiteBuilder

#: Writes the service and answers with the key it was given (which must not show).
AGENT = """\
import os, pathlib
pathlib.Path("src").mkdir(exist_ok=True)
pathlib.Path("src/service.py").write_text("import os\\n\\nclass UserService:\\n    pass\\n")
print("Done: UserService added, key " + os.environ["MY_SERVICE_TOKEN"])
"""

PASSING = """\
id: service-class
defends: AGENTS.md
prompt: Add the user service.
checks:
  - id: service-uses-class
    type: file_contains
    file: src/service.py
    pattern: "^class \\\\w+Service"
  - type: output_matches
    pattern: "Done: .*"
    description: says it is done
"""

FAILING = """\
id: service-function
defends: AGENTS.md
prompt: Add the user service.
checks:
  - {type: file_contains, file: src/service.py, pattern: "^def "}
"""

SECRET = "tok-5c4b3a29f8e7d6"

LINES = [
    "PASSED service-uses-class [file_contains]: src/service.py: pattern "
    "'^class \\w+Service' found: 'class UserService'",
    "PASSED output_matches-1 [output_matches] (says it is done): pattern 'Done: .*' found: "
    "'Done: UserService added, key [REDACTED]'",
]


@pytest.fixture
def suite(
    make_suite: SuiteBuilder, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    make_suite(
        AGENT,
        {"service-class": PASSING, "service-function": FAILING},
        fixtures={"AGENTS.md": "Services are classes.\n"},
    )


@pytest.mark.usefixtures("suite")
def test_passes_section_lists_each_check_of_a_passing_case(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", "-rA")

    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    passes = out[out.index("= PASSES =") : out.index("= eval gate =")]
    assert "_ eval case service-class _" in passes
    assert passes.count("Captured stdout call") == 1
    result.stdout.fnmatch_lines(["*Captured stdout call*", *LINES])
    assert SECRET not in out
    # The failing case reports its failed checks, once, and no section of passed ones.
    assert "FAILED file_contains-0 [file_contains]" in out
    assert "PASSED file_contains-0" not in out
    # Without -rP / -rA, not even under -vv, the checks of passing cases stay out.
    default = pytester.runpytest("-p", "no:cacheprovider", "--eval-no-save", "-vv")
    default.assert_outcomes(passed=1, failed=1)
    assert "PASSED service-uses-class" not in default.stdout.str()


@pytest.mark.usefixtures("suite")
def test_junit_system_out_carries_the_checks_of_a_passing_case(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--eval-no-save",
        "--junitxml=junit.xml",
        "-o",
        "junit_logging=system-out",
    )

    result.assert_outcomes(passed=1, failed=1)
    cases = {
        case.get("name"): case
        for case in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    }
    system_out = cases["service-class"].findtext("system-out") or ""
    for line in LINES:
        assert line in system_out
    assert SECRET not in (pytester.path / "junit.xml").read_text()


@pytest.mark.usefixtures("suite")
def test_under_red_first_a_red_case_lists_the_checks_that_failed(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-no-save", "--eval-red-first", "-rP"
    )

    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    passes = out[out.index("= PASSES =") : out.index("= eval red-first =")]
    assert "_ eval case service-function _" in passes
    assert (
        "FAILED file_contains-0 [file_contains]: src/service.py: pattern '^def ' not found"
        in passes
    )
    assert "service-class" not in passes
