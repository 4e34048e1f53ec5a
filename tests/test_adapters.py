"""The adapter surface: an adapter the package does not know, or whose answers need a hook it
lacks, fails before anything is written, naming what to implement (docs/extending.md).

An unknown adapter is played by the project itself: dbt's `dispatch:` search order puts the
root project first, and its `<adapter>__capabilities` stands in for the adapter's answers."""

from __future__ import annotations

import pytest

from harness import CdcProject
from scenarios import CONFIG, EVENTS, MODEL


def _write_answers(project: CdcProject, body: str) -> None:
    name = f"{project.adapter}__capabilities"
    project.write("macros/capabilities.sql", f"{{% macro {name}() -%}}\n{body}\n{{%- endmacro %}}\n")


def _answer_as(project: CdcProject, body: str) -> None:
    """The root project answers the adapter's capabilities with `body` (Jinja)."""
    text = (project.path / "dbt_project.yml").read_text()
    dispatch = "dispatch:\n  - macro_namespace: auto_cdc\n    search_order: ['cdc_test', 'auto_cdc']\n"
    project.write("dbt_project.yml", text + dispatch)
    _write_answers(project, body)
    project.create_table("events", EVENTS)
    project.replace_rows("events", [(1, "a", "U", 1)])
    project.model("dim", MODEL, **CONFIG)


@pytest.mark.dbt_v2
def test_an_unknown_adapter_fails_before_writing_with_what_to_implement(project: CdcProject) -> None:
    _answer_as(project, "{{ return(auto_cdc.default__capabilities()) }}")
    outcome = project.run(expect_success=False)
    assert f"auto_cdc does not know the adapter '{project.adapter}'" in outcome.error
    assert f"`{project.adapter}__capabilities()`" in outcome.error
    for answer in ("transactions", "concurrency", "run_clock", "max_identifier_length", "untested_features"):
        assert f"- {answer}: " in outcome.error, answer
    assert project.tables() == ["events"]


@pytest.mark.dbt_v2
def test_an_incomplete_answer_names_the_missing_keys(project: CdcProject) -> None:
    _answer_as(project, "{{ return({'transactions': true, 'concurrency': 'single_writer'}) }}")
    outcome = project.run(expect_success=False)
    missing = "adapter, run_clock, compares_every_type"
    assert f"`{project.adapter}__capabilities()` does not answer {missing}" in outcome.error
    assert project.tables() == ["events"]


# The hooks each adapter has of its own (the others are the package's defaults).
OWN_HOOKS = {"duckdb": set(), "postgres": {"lock_target", "run_clock", "columns_compared_as_text"}}


@pytest.mark.dbt_v2
@pytest.mark.parametrize(
    ("answer", "value", "hook"),
    [
        ("concurrency", "'lock'", "lock_target"),
        ("run_clock", "'after_lock'", "run_clock"),
        ("compares_every_type", "false", "columns_compared_as_text"),
        ("concurrency", "'fence'", "read_fence"),
    ],
)
def test_an_answer_that_needs_a_hook_fails_until_the_hook_exists(
    project: CdcProject, answer: str, value: str, hook: str
) -> None:
    # The package's own answers for this adapter but one, which asks for a hook: where the
    # adapter has it, the run goes on; where not, it fails before writing and names the hook.
    own = f"auto_cdc.{project.adapter}__capabilities()"
    changed = f"{{%- set answers = {own} -%}}{{%- do answers.update({{'{answer}': {value}}}) -%}}"
    changed += "{{ return(answers) }}"
    if hook == "read_fence":  # asked for when a run applies to existing tables: the second run
        _answer_as(project, f"{{{{ return({own}) }}}}")
        project.run()
        _write_answers(project, changed)
        project.replace_rows("events", [(1, "b", "U", 2)])
    else:
        _answer_as(project, changed)
    if hook in OWN_HOOKS[project.adapter]:
        project.run()
        assert project.rows("dim") == [(1, "a")]
        return
    outcome = project.run(expect_success=False)
    assert f"so it needs its own `{project.adapter}__{hook}`" in outcome.error
    if hook == "read_fence":
        assert project.rows("dim") == [(1, "a")]
    else:  # dbt v2 runs no transaction, so the working table the probe left stays (no model table)
        assert [table for table in project.tables() if "__cdc_tmp" not in table] == ["events"]


@pytest.mark.dbt_v2
@pytest.mark.parametrize(
    ("changed", "said"),
    [
        # dbt's dispatch falls back to a parent adapter's macros (postgres__ for Redshift): answers
        # written for another adapter are refused.
        ("{'adapter': 'other'}", "the answers found are other's, not {adapter}'s"),
        ("{'transactions': false, 'concurrency': 'lock'}", "without transactions a concurrent run can only be"),
        ("{'concurrency': 'optimistic'}", "concurrency is 'optimistic'"),
        ("{'untested_features': ['contracts']}", "untested_features names contracts"),
    ],
)
def test_answers_that_cannot_hold_fail_before_anything_runs(project: CdcProject, changed: str, said: str) -> None:
    own = f"auto_cdc.{project.adapter}__capabilities()"
    _answer_as(project, f"{{%- set answers = {own} -%}}{{%- do answers.update({changed}) -%}}{{{{ return(answers) }}}}")
    outcome = project.run(expect_success=False)
    assert f"`{project.adapter}__capabilities()` cannot be used; nothing was written." in outcome.error
    assert said.format(adapter=project.adapter) in outcome.error
    assert project.tables() == ["events"]


def test_a_project_can_answer_for_the_adapter_and_run(project: CdcProject) -> None:
    # The dispatch search order reaches the project's answers; the same answers as the package's
    # run the model as usual (a fourth adapter's first step).
    own = f"auto_cdc.{project.adapter}__capabilities()"
    _answer_as(project, f"{{{{ return({own}) }}}}")
    project.run()
    assert project.rows("dim") == [(1, "a")]
