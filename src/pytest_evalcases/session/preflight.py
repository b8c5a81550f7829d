"""The agent's preflight for a session (docs/agents.md, "Before the first run"): which
agents the session's variants run, which collected cases need each, and what a check
that fails does. The checks themselves are :mod:`pytest_evalcases.agents.preflight`;
:mod:`pytest_evalcases.plugin.preflight` calls this once collection is final.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_evalcases.agents import preflight
from pytest_evalcases.cases.discovery import Discovery
from pytest_evalcases.errors import CaseFileError, UsageError
from pytest_evalcases.session.state import EvalSession

if TYPE_CHECKING:
    from pytest_evalcases.agents.base import Agent
    from pytest_evalcases.cases.loading import LoadedCase
    from pytest_evalcases.run.workspace import Variant


class SessionPreflight:
    """Checks the agent before the first case runs.

    The controller checks once, the version included; when the run did not ask for
    eval cases, a failure leaves the reason in ``state.unavailable`` instead of
    stopping the session. An xdist worker, which the controller cannot tell, looks
    again for itself (``worker``: program and credentials, no version, never an
    error) and skips its own items for the same reason.
    """

    def __init__(self, state: EvalSession, *, asked: bool, worker: bool = False) -> None:
        self.state = state
        self.asked = asked
        self.worker = worker
        self.done = False

    def runs(self, variant: Variant, case: LoadedCase, agent: Agent) -> bool:
        """Whether the run of ``case`` on ``variant`` runs ``agent``."""
        runs = self.state.agent_for(variant)
        if runs is None or key(runs) != key(agent):
            return False
        # A case for other agents only (`agents:`) is skipped on this one's variants.
        return not case.other_agent(self.state.agent_name(variant))

    def check(self, needs: Callable[[Agent], preflight.Needs]) -> None:
        """Checks each agent the session's variants run, once; :class:`UsageError`
        when one cannot run and the run asked for eval cases."""
        # `needs` loads the collected cases (bare, quarantine): only once an agent and a
        # variant that runs it make the answer matter.
        if self.done:
            return
        self.done = True
        state = self.state
        # Each distinct agent once (an agent matrix checks every CLI it runs), in the
        # variants' order; the first one's version is the session's.
        checked: dict[tuple[object, ...], preflight.Checked | str | None] = {}
        for variant in state.settings.variants:
            agent = state.agent_for(variant)
            if agent is None or variant.graded_dir is not None:
                continue
            agent_key = key(agent)
            if agent_key in checked:
                done = checked[agent_key]
            else:
                done = checked[agent_key] = self._check_agent(agent, needs)
            if isinstance(done, str):
                state.unavailable[variant.name] = done
            elif done is not None and not self.worker:
                state.preflights[variant.name] = done
                if state.preflight is None:
                    state.preflight = done

    def _check_agent(
        self, agent: Agent, needs: Callable[[Agent], preflight.Needs]
    ) -> preflight.Checked | str | None:
        """What the check found; the reason, when the agent cannot run and the run
        did not ask for eval cases."""
        found = needs(agent)
        if not found.runs:
            return None
        try:
            # eval_sandbox = bwrap where bubblewrap cannot run stops the session too.
            self.state.sandbox  # noqa: B018
            return preflight.check(
                agent,
                found,
                os.environ,
                self.state.settings.rootdir,
                with_version=not self.worker,
            )
        except UsageError as exc:
            if self.asked and not self.worker:
                raise
            return str(exc)

    def cases_of(self, ids: Sequence[str], agent: Agent, rootpath: Path) -> Iterator[LoadedCase]:
        """The cases of the items a worker collected (node ids relative to
        ``rootpath``) that ``agent`` runs, loaded from their files."""
        from pytest_evalcases.cases.loading import load_case_file, load_task_dir

        state = self.state
        variants = {v.name: v for v in state.settings.variants}
        # Each case's agent by name, for its `agents:` (one name: the variants of
        # `agent` run the same agent).
        wanted: dict[Path, dict[str, str | None]] = {}
        for nodeid in ids:
            file, _, name = nodeid.partition("::")
            case_id, _, param = name.partition("[")
            variant = variants.get(variant_of(param.rstrip("]"), variants))
            runs = state.agent_for(variant) if variant is not None else None
            if variant is None or runs is None or key(runs) != key(agent):
                continue
            if name:
                in_file = wanted.setdefault(rootpath / file, {})
                in_file[case_id] = state.agent_name(variant)
        for path, case_ids in wanted.items():
            found = state.discovery.case_file(path)
            if found is None:
                continue
            try:
                if found.kind == "task":
                    cases = [load_task_dir(path, state.registry)]
                else:
                    cache = state.parse_cache
                    cases = load_case_file(path, found.evals_root, state.registry, cache)
            except (CaseFileError, UsageError):
                continue  # the file's items say why when they run
            yield from (
                case
                for case in cases
                if case.id in case_ids
                and not case.quarantine
                and not case.other_agent(case_ids[case.id])
            )


def asked_for_cases(
    arguments: Sequence[str], paths: Sequence[str], base: Path, discovery: Discovery
) -> bool:
    """Whether the command line (its ``arguments``, and ``PYTEST_ADDOPTS``) asked for
    eval cases: a path or node id of a case file or of a directory of them
    (``evals/``, an ``eval_paths`` entry, or one below), ``-k`` or ``-m`` (which then
    selected eval cases, or no agent would be needed), or any ``--eval-*`` option,
    ``--eval-agent`` included. ``paths`` are the ones given on the command line, none
    when pytest took them from the ini's ``testpaths``: the ini's ``testpaths`` and
    ``addopts`` ask for nothing, they are every teammate's ``pytest``."""
    given = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *arguments]
    if any(arg.startswith(("-k", "-m", "--eval-")) for arg in given):
        return True
    for arg in paths:
        path = Path(os.path.normpath(base / arg.partition("::")[0]))
        if discovery.case_file(path) is not None or discovery.evals_root(path / "-") is not None:
            return True
    return False


def key(agent: Agent) -> tuple[object, ...]:
    """What the preflight checks of an agent: variants that differ only in the model
    share one check (same program, same credentials, same version)."""
    return (type(agent), agent.name, agent.args)


def variant_of(param: str, variants: Mapping[str, Variant]) -> str:
    """The variant named in an item's parameter (``cx``, ``cx-r2``, ``r2``); ``""`` for
    the single unnamed variant."""
    if param in variants:
        return param
    head, sep, tail = param.rpartition("-r")
    if sep and tail.isdigit() and head in variants:
        return head
    return ""


def needs(cases: Iterable[LoadedCase]) -> preflight.Needs:
    """How many cases run the agent, how many of them bare with its own model, and how
    many with the scripted model's (each case once)."""
    scripted: dict[str, bool] = {}
    bare: dict[str, bool] = {}
    for case in cases:
        scripted[case.id] = case.script is not None
        # A scripted run needs no login: bare or not, it asks for no credential.
        bare[case.id] = case.bare and case.script is None
    return preflight.Needs(runs=len(bare), bare=sum(bare.values()), scripted=sum(scripted.values()))
