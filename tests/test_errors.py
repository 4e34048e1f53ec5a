"""Bad configuration and bad data fail the run with a message naming the model and the config
or column, before anything is written: a previously built target and its state are unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from harness import CdcProject
from scenarios import CITY_EVENTS, CONFIG, MODEL, fails

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]  # on Spark too

FIRST_BATCH = [(1, "a", "x", "U", 1), (2, "b", "y", "U", 1)]


def _built(project: CdcProject) -> dict[str, list[tuple[Any, ...]]]:
    """A target built by one good run (and the next batch waiting); returns everything in it and its
    state. (`fails` checks that a failing run leaves all of it unchanged.)"""
    project.create_table("events", CITY_EVENTS)
    project.model("dim", MODEL, **CONFIG)
    project.replace_rows("events", FIRST_BATCH)
    project.run("dim")
    project.replace_rows("events", [(1, "new", "x", "U", 2), (3, "c", "z", "U", 2)])
    return project.snapshot(*project.cdc_tables("dim"))


def _without(config: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in names}


CONFIG_ERRORS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "both_column_lists": (
        {**CONFIG, "column_list": ["name"]},
        ["`column_list` and `except_column_list` are mutually exclusive"],
    ),
    "both_track_history_lists": (
        {
            **CONFIG,
            "stored_as_scd_type": 2,
            "track_history_column_list": ["name"],
            "track_history_except_column_list": ["city"],
        },
        ["`track_history_column_list` and `track_history_except_column_list` are mutually exclusive"],
    ),
    "truncates_with_scd2": (
        {**CONFIG, "stored_as_scd_type": 2, "apply_as_truncates": "op = 'T'"},
        ["`apply_as_truncates` is only supported with stored_as_scd_type=1"],
    ),
    "track_history_with_scd1": (
        {**CONFIG, "track_history_column_list": ["name"]},
        ["`track_history_column_list` only applies to stored_as_scd_type=2"],
    ),
    "system_sequence_without_bitemporal": (
        {**CONFIG, "system_sequence_by": "seq"},
        ["`system_sequence_by` only applies to stored_as_scd_type='bitemporal'"],
    ),
    "columns_to_update_with_ignore_nulls": (
        {**CONFIG, "columns_to_update": "name", "ignore_null_updates": True},
        ["`columns_to_update` and `ignore_null_updates` cannot be combined"],
    ),
    "unknown_scd_type": (
        {**CONFIG, "stored_as_scd_type": 3},
        ["`stored_as_scd_type` is '3'; use 1, 2 or 'bitemporal'"],
    ),
    "bitemporal_without_system_sequence": (
        {**CONFIG, "stored_as_scd_type": "bitemporal"},
        ["stored_as_scd_type='bitemporal' needs `system_sequence_by`"],
    ),
    "track_history_unknown_column": (
        {**CONFIG, "stored_as_scd_type": 2, "track_history_column_list": ["nmae"]},
        ["`track_history_column_list` names column 'nmae'"],
    ),
    "track_history_names_a_key": (
        {**CONFIG, "stored_as_scd_type": 2, "track_history_except_column_list": ["id"]},
        ["`track_history_except_column_list` names 'id', which is not a non-key column"],
    ),
    "column_list_unknown_column": (
        {**_without(CONFIG, "except_column_list"), "column_list": ["name", "nope"]},
        ["`column_list` names column 'nope', which the model query does not return"],
    ),
    "except_column_list_unknown_column": (
        {**CONFIG, "except_column_list": ["op", "sequence"]},
        ["`except_column_list` names column 'sequence'"],
    ),
    "unknown_key": ({**CONFIG, "keys": ["id", "tenant"]}, ["`keys` names column 'tenant'"]),
    "unknown_sequence_column": ({**CONFIG, "sequence_by": "sequenceNum"}, ["`sequence_by` names column 'sequenceNum'"]),
    "ignore_null_list_unknown_column": (
        {**CONFIG, "ignore_null_updates_column_list": ["nmae"]},
        ["`ignore_null_updates_column_list` names column 'nmae'"],
    ),
    "missing_keys": (_without(CONFIG, "keys"), ["`keys` is required"]),
    "missing_sequence_by": (_without(CONFIG, "sequence_by"), ["`sequence_by` is required"]),
    "negative_retention": ({**CONFIG, "tombstone_retention": -1}, ["`tombstone_retention` must be a whole number"]),
    "unsupported_on_schema_change": (
        {**CONFIG, "on_schema_change": "sync_all_columns"},
        ["`on_schema_change` is 'sync_all_columns'"],
    ),
}


@pytest.mark.parametrize("case", CONFIG_ERRORS, ids=list(CONFIG_ERRORS))
def test_config_error_changes_nothing(project: CdcProject, case: str) -> None:
    _built(project)
    config, fragments = CONFIG_ERRORS[case]
    project.model("dim", MODEL, **config)
    fails(project, *fragments, "nothing was written")


def test_an_unknown_scd_type_is_one_error(project: CdcProject) -> None:
    """Not a follow-on error from another check that reads the type (`apply_as_truncates`)."""
    _built(project)
    project.model("dim", MODEL, **{**CONFIG, "stored_as_scd_type": 3, "apply_as_truncates": "op = 'T'"})
    outcome = fails(project, "`stored_as_scd_type` is '3'")
    assert "`apply_as_truncates`" not in outcome.error, outcome.error


def test_several_config_errors_are_reported_together(project: CdcProject) -> None:
    _built(project)
    project.model("dim", MODEL, **{**CONFIG, "column_list": ["name"], "tombstone_retention": "soon"})
    fails(project, "mutually exclusive", "`tombstone_retention`")


def test_reserved_source_column(project: CdcProject) -> None:
    _built(project)
    project.model("dim", project.dialect('select *, 1 as "__START_AT" from {{ target.schema }}.events'), **CONFIG)
    fails(project, "'__START_AT'", "reserves")


def test_config_error_on_first_run_creates_nothing(project: CdcProject) -> None:
    project.create_table("events", CITY_EVENTS)
    project.replace_rows("events", FIRST_BATCH)
    project.model("dim", MODEL, **_without(CONFIG, "sequence_by"))
    fails(project, "`sequence_by` is required")
    assert project.snapshot(*project.cdc_tables("dim")) == {}


DATA_ERRORS: dict[str, tuple[list[tuple[Any, ...]], list[str]]] = {
    "null_key": (
        [(None, "a", "x", "U", 3), (None, None, None, "D", 4), (4, "d", "w", "U", 3)],
        ["2 event(s) have a NULL in key column 'id'"],
    ),
    "null_sequence": ([(4, "d", "w", "U", None)], ["1 event(s) have a NULL sequence", "seq"]),
    "conflicting_duplicates": (
        [(4, "d", "w", "U", 3), (4, "e", "w", "U", 3)],
        ["different events at the same sequence", "id=4", "add a column that orders them to `sequence_by`"],
    ),
    "delete_and_upsert_at_one_sequence": (
        [(4, "d", "w", "U", 3), (4, None, None, "D", 3)],
        ["different events at the same sequence", "the kind of event"],
    ),
}


@pytest.mark.parametrize("case", DATA_ERRORS, ids=list(DATA_ERRORS))
def test_bad_data_changes_nothing(project: CdcProject, case: str) -> None:
    _built(project)
    rows, fragments = DATA_ERRORS[case]
    project.replace_rows("events", rows)
    fails(project, *fragments, "nothing was written")


def test_bad_data_on_first_run_creates_nothing(project: CdcProject) -> None:
    project.create_table("events", CITY_EVENTS)
    project.model("dim", MODEL, **CONFIG)
    project.replace_rows("events", [(None, "a", "x", "U", 1)])
    fails(project, "NULL in key column 'id'")
    assert project.snapshot(*project.cdc_tables("dim")) == {}


@pytest.mark.parametrize(("scd_type", "advice"), [(1, "`apply_as_truncates`"), (2, "SCD2 cannot apply a truncate")])
def test_a_truncate_row_without_truncates_is_named_as_one(project: CdcProject, scd_type: int, advice: str) -> None:
    """A Debezium truncate ('t': no key, no values) in a model that does not apply truncates."""
    project.create_table("events", CITY_EVENTS)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=scd_type)
    project.replace_rows("events", [(1, "a", "x", "U", 1), (None, None, None, "t", 2)])
    fails(project, "1 event(s) have a NULL in key column 'id'", "1 of them have no key and no value", advice)


def test_on_schema_change_fail(project: CdcProject) -> None:
    project.create_table("events", CITY_EVENTS)
    project.model("dim", MODEL, **CONFIG, on_schema_change="fail")
    project.replace_rows("events", FIRST_BATCH)
    project.run("dim")
    project.add_column("events", "zip", "varchar")
    fails(project, "new column(s) zip", "on_schema_change='fail'")


def test_changed_sequence_shape_asks_for_a_full_refresh(project: CdcProject) -> None:
    _built(project)
    project.model("dim", MODEL, **{**CONFIG, "sequence_by": ["seq", "id"]})
    fails(project, "--full-refresh")
    project.run("dim", full_refresh=True)
    assert project.rows("dim") == [(1, "new", "x"), (3, "c", "z")]


def test_failing_model_query_changes_nothing(project: CdcProject) -> None:
    before = _built(project)
    boom = "raise_error('boom')" if project.adapter == "spark" else "cast(name as integer)"  # Spark casts to NULL
    project.model("dim", f"select *, {boom} as boom from {{{{ target.schema }}}}.events", **CONFIG)
    assert not project.run("dim", expect_success=False).success
    assert project.snapshot(*project.cdc_tables("dim")) == before


def test_as_of_on_an_scd1_target_says_so(project: CdcProject) -> None:
    _built(project)
    project.write("models/dim_as_of.sql", "select * from {{ auto_cdc.as_of(ref('dim'), 5) }}\n")
    outcome = project.run("dim_as_of", expect_success=False)
    for fragment in ("auto_cdc.as_of", "has no __START_AT/__END_AT history", "not an SCD2 or bitemporal target"):
        assert fragment in outcome.error, outcome.error
