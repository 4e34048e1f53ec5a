"""stored_as_scd_type='bitemporal' on both adapters: SPEC 7.6 in one run, in four, and in
shuffled arrival orders; corrections; track-history lists and partial updates; the point-in-time
helper; and the configuration and data errors (nothing written)."""

from __future__ import annotations

import datetime

import pytest

from harness import CdcProject
from reference import Event, bitemporal
from scenarios import MODEL, fails, run_batches
from spec_data import COMPANY_COLUMNS, COMPANY_CONFIG, COMPANY_EVENTS, COMPANY_RUN, SPEC_7_6, _t, shuffled_split

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]  # on Spark too


def _setup(project: CdcProject, **extra: object) -> None:
    project.create_table("events", COMPANY_COLUMNS)
    project.model("companies", MODEL, **{**COMPANY_CONFIG, **extra})


def test_spec_7_6_in_one_run(project: CdcProject) -> None:
    _setup(project)
    assert run_batches(project, COMPANY_EVENTS, **COMPANY_RUN) == [(6, 0)]
    assert project.rows("companies") == SPEC_7_6
    assert project.columns("companies") == [
        "CompanyId",
        "datapoints",
        "__START_AT",
        "__END_AT",
        "__SYSTEM_START_AT",
        "__SYSTEM_END_AT",
    ]


def test_spec_7_6_in_four_runs(project: CdcProject) -> None:
    _setup(project)
    # Each run adds rows and closes the ones the new system time replaces.
    metrics = run_batches(project, *[[event] for event in COMPANY_EVENTS], **COMPANY_RUN)
    assert metrics == [(1, 0), (3, 0), (3, 0), (2, 0)]
    assert project.rows("companies") == SPEC_7_6
    assert run_batches(project, COMPANY_EVENTS, **COMPANY_RUN) == [(0, 0)]  # redelivered: nothing changes


SPLITS = {
    "reversed": [[event] for event in reversed(COMPANY_EVENTS)],
    "delete_first": [[COMPANY_EVENTS[3]], COMPANY_EVENTS[:3]],
    "shuffled_2_runs": shuffled_split(COMPANY_EVENTS, seed=3, runs=2),
    "shuffled_3_runs": shuffled_split(COMPANY_EVENTS, seed=5, runs=3),
}


@pytest.mark.parametrize("split", SPLITS, ids=list(SPLITS))
def test_spec_7_6_in_any_arrival_order(project: CdcProject, split: str) -> None:
    _setup(project)
    run_batches(project, *SPLITS[split], **COMPANY_RUN)
    assert project.rows("companies") == SPEC_7_6


def test_correction_of_a_business_time_at_a_later_system_time(project: CdcProject) -> None:
    """The same key and business time seen again later replaces the value from then on."""
    _setup(project)
    first = ("A", "wrong", _t("09:00:00"), _t("09:00:00"), "UPSERT")
    fix = ("A", "right", _t("09:00:00"), _t("11:00:00"), "UPSERT")
    run_batches(project, [fix], [first], **COMPANY_RUN)  # the correction even arrives first
    assert project.rows("companies") == [
        ("A", "right", _t("09:00:00"), None, _t("11:00:00"), None),
        ("A", "wrong", _t("09:00:00"), None, _t("09:00:00"), _t("11:00:00")),
    ]
    assert project.rows("companies") == _reference([first, fix])


def _reference(rows: list[tuple], tracked: list[str] | None = None, ignore_null: set[str] = frozenset()) -> list[tuple]:
    events = [
        Event(key, bt, "delete" if op == "DELETE" else "upsert", {"datapoints": value}, system=st)
        for key, value, bt, st, op in rows
    ]
    return bitemporal(events, ["datapoints"], tracked=tracked, ignore_null=ignore_null)


def test_two_keys_have_their_own_system_times(project: CdcProject) -> None:
    _setup(project)
    rows = [
        ("A", "a1", _t("01:00:00"), _t("01:00:00"), "UPSERT"),
        ("B", "b1", _t("01:00:00"), _t("02:00:00"), "UPSERT"),
        ("A", "a2", _t("03:00:00"), _t("04:00:00"), "UPSERT"),
        ("B", None, _t("00:30:00"), _t("05:00:00"), "DELETE"),  # late in both times
    ]
    run_batches(project, rows[2:], rows[:2], **COMPANY_RUN)
    assert project.rows("companies") == _reference(rows)


def test_track_history_list_updates_in_place(project: CdcProject) -> None:
    project.create_table("events", {**COMPANY_COLUMNS, "note": "varchar"})
    project.model("companies", MODEL, **COMPANY_CONFIG, track_history_except_column_list=["note"])
    _t0, _t1 = _t("01:00:00"), _t("02:00:00")
    project.insert("events", [("A", "x", _t0, _t0, "UPSERT", "first"), ("A", "x", _t1, _t1, "UPSERT", "second")])
    project.run()
    # One business version; its untracked note changed at system time t1.
    assert project.rows("companies") == [
        ("A", "x", "first", _t0, None, _t0, _t1),
        ("A", "x", "second", _t0, None, _t1, None),
    ]


def test_ignore_null_updates_take_the_preceding_value(project: CdcProject) -> None:
    _setup(project, ignore_null_updates=True)
    rows = [
        ("A", "v1", _t("01:00:00"), _t("01:00:00"), "UPSERT"),
        ("A", None, _t("02:00:00"), _t("02:00:00"), "UPSERT"),
    ]
    run_batches(project, rows, **COMPANY_RUN)
    assert project.rows("companies") == _reference(rows, ignore_null={"datapoints"})
    assert project.rows("companies") == [("A", "v1", _t("01:00:00"), None, _t("01:00:00"), None)]


def test_as_of_answers_both_questions(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, COMPANY_EVENTS, **COMPANY_RUN)

    # Spark: dbt-spark replaces an Iceberg table in place (other formats are dropped first).
    table_format = ", file_format='iceberg'" if project.adapter == "spark" else ""

    def believed(business: str, system: str | None) -> list[tuple]:
        arguments = f"business_time=\"cast('{business}' as timestamp)\""
        if system is not None:
            arguments += f", system_time=\"cast('{system}' as timestamp)\""
        project.write(
            "models/companies_as_of.sql",
            f"{{{{ config(materialized='table'{table_format}) }}}}\n"
            f"{{{{ auto_cdc.as_of(ref('companies'), {arguments}) }}}}\n",
        )
        project.run("companies_as_of")
        return [row[:2] for row in project.rows("companies_as_of")]

    assert believed("2025-07-18 12:10:00", "2025-07-18 12:22:00") == [("A", "XFv1")]  # before XFv3 was known
    assert believed("2025-07-18 12:10:00", "2025-07-18 12:26:00") == [("A", "XFv3")]
    assert believed("2025-07-18 12:10:00", None) == [("A", "XFv3")]  # what we believe now
    assert believed("2025-07-18 12:45:00", None) == []  # deleted at 12:30


# --- errors: nothing is written -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"system_sequence_by": None}, "needs `system_sequence_by`"),
        ({"system_sequence_by": "nope"}, "`system_sequence_by` names column 'nope'"),
        ({"apply_as_truncates": "op = 'TRUNCATE'"}, "`apply_as_truncates` is only supported with stored_as_scd_type=1"),
        ({"columns_to_update": "op"}, "`columns_to_update` is not supported with stored_as_scd_type='bitemporal'"),
    ],
)
def test_invalid_config_fails_before_writing(project: CdcProject, change: dict, message: str) -> None:
    _setup(project)
    run_batches(project, COMPANY_EVENTS[:1], **COMPANY_RUN)
    config = {key: value for key, value in {**COMPANY_CONFIG, **change}.items() if value is not None}
    project.model("companies", MODEL, **config)
    fails(project, message, "model 'companies'", model="companies")


def test_null_system_time_fails(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, COMPANY_EVENTS[:1], **COMPANY_RUN)
    project.replace_rows("events", [("A", "x", _t("11:00:00"), None, "UPSERT")])
    fails(project, "1 event(s) have a NULL system sequence", model="companies")


def test_conflicting_events_at_one_business_and_system_time_fail(project: CdcProject) -> None:
    _setup(project)
    project.insert(
        "events",
        [("A", "x", _t("11:00:00"), _t("11:00:00"), "UPSERT"), ("A", "y", _t("11:00:00"), _t("11:00:00"), "UPSERT")],
    )
    fails(
        project,
        "1 key(s) have two or more different events at the same sequence",
        "system_sequence_by=",  # the example names the system time too
        "they differ in: datapoints (upsert datapoints='x'; upsert datapoints='y')",
        model="companies",
    )


def test_switching_to_bitemporal_asks_for_a_full_refresh(project: CdcProject) -> None:
    project.create_table("events", COMPANY_COLUMNS)
    scd2 = {key: value for key, value in COMPANY_CONFIG.items() if key != "system_sequence_by"}
    project.model("companies", MODEL, **{**scd2, "stored_as_scd_type": 2})
    run_batches(project, COMPANY_EVENTS[:1], **COMPANY_RUN)
    project.model("companies", MODEL, **COMPANY_CONFIG)
    fails(project, "`stored_as_scd_type` changed from '2' to 'bitemporal'", "--full-refresh", model="companies")
    project.run("companies", full_refresh=True)
    assert project.rows("companies") == [("A", "XFv1", _t("10:01:00"), None, _t("10:05:00"), None)]


def test_start_and_end_types_follow_the_sequences(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, COMPANY_EVENTS[:1], **COMPANY_RUN)
    row = project.rows("companies")[0]
    assert all(isinstance(value, datetime.datetime) for value in (row[2], row[4]))


def test_new_column_is_appended_without_new_versions(project: CdcProject) -> None:
    _setup(project)
    run_batches(project, COMPANY_EVENTS[:1], **COMPANY_RUN)
    project.add_column("events", "region", "varchar")
    project.replace_rows("events", [("A", "XFv1", _t("10:01:00"), _t("10:05:00"), "UPSERT", "EU")])  # redelivered
    project.run("companies")
    assert project.columns("companies")[-1] == "region"
    assert project.rows("companies") == [("A", "XFv1", _t("10:01:00"), None, _t("10:05:00"), None, "EU")]


def test_sequence_by_list_orders_business_time_lexicographically(project: CdcProject) -> None:
    project.create_table("events", {"id": "integer", "v": "varchar", "day": "integer", "n": "integer", "st": "integer"})
    project.model(
        "companies",
        MODEL,
        keys=["id"],
        sequence_by=["day", "n"],
        system_sequence_by="st",
        stored_as_scd_type="bitemporal",
        except_column_list=["day", "n", "st"],
    )
    project.insert("events", [(1, "b", 1, 10, 2), (1, "a", 1, 9, 1)])
    project.run("companies")
    rows = project.query(
        project.dialect('select v, "__SYSTEM_START_AT", "__SYSTEM_END_AT", "__END_AT" is null')
        + project.dialect(f' from {project.relation("companies")} order by "__START_AT", "__SYSTEM_START_AT"')
    )
    assert rows == [("a", 1, 2, True), ("a", 2, None, False), ("b", 2, None, True)]
