"""Configuration keys: a typo close to an auto_cdc config fails with "did you mean", a config of
the other materialization or an out-of-range value fails, an expression that does not compile
names its config, and dbt's and other packages' keys keep working."""

from __future__ import annotations

from typing import Any

import pytest

from harness import CdcProject
from scenarios import CONFIG, EVENTS, HISTORY, MODEL, built, fails, snapshot_model

TYPOS = {
    "apply_as_delete": ("apply_as_delete", "op = 'D'", "apply_as_deletes"),
    "stored_as_scd_typ": ("stored_as_scd_typ", 2, "stored_as_scd_type"),
    "ignore_null_update": ("ignore_null_update", True, "ignore_null_updates"),
}

pytestmark = [pytest.mark.spark, pytest.mark.dbt_v2]


@pytest.mark.parametrize("typo", TYPOS)
def test_config_key_typo_fails_with_did_you_mean(project: CdcProject, typo: str) -> None:
    key, value, meant = TYPOS[typo]
    project.create_table("events", EVENTS)
    config = {k: v for k, v in CONFIG.items() if k != meant}
    project.model("dim", MODEL, **config, **{key: value})
    project.replace_rows("events", HISTORY)
    fails(project, f"`{key}`", f"did you mean `{meant}`?")


# Names further than two edits from a config, one of each shape the rule catches (docs/configuration.md,
# "Configuration reference"), SPEC 6.1's examples among them.
WORD_TYPOS = {
    "track_history_except_column": "track_history_except_column_list",  # a word dropped
    "track_history_except_columns": "track_history_except_column_list",
    "scd_type": "stored_as_scd_type",  # two words dropped, half kept
    "checkpoint_col": "checkpoint_column",  # cut short
    "checkpoint": "checkpoint_column",
    "exclude_column_list": "except_column_list",  # a word changed
    "apply_as_updates": "apply_as_deletes",
    "sequence_by_column": "sequence_by",  # a word added
    "change_feed_enabled": "change_feed",
}


def test_a_config_name_with_a_word_added_dropped_changed_or_cut_short_fails(project: CdcProject) -> None:
    """Each would otherwise be ignored: `track_history_except_column` opened a false SCD2 version
    for a change in the column it meant to exclude, `exclude_column_list` wrote the op and sequence
    into the target for good. On an existing model too, every one named at once, nothing written."""
    built(project, scd_type=2)
    project.model("dim", MODEL, **CONFIG, stored_as_scd_type=2, **dict.fromkeys(WORD_TYPOS, "name"))
    project.insert("events", [(1, "a3", "U", 9)])
    fails(
        project, *(f"`{typo}` is not an auto_cdc config; did you mean `{meant}`?" for typo, meant in WORD_TYPOS.items())
    )


def test_typo_in_meta_properties_yaml_and_dbt_project_yml_is_caught(project: CdcProject) -> None:
    """Keys come from what the user set (`unrendered_config`), wherever they set it (under dbt v2,
    which refuses a package's key at the top level itself, under `meta` there)."""
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, meta={"tombstone_retension": 5})
    project.replace_rows("events", HISTORY)
    fails(project, "`tombstone_retension`", "did you mean `tombstone_retention`?")
    project.model("dim", MODEL, **CONFIG)
    in_yaml = "      meta:\n        column_lists: [id]\n" if project.dbt_v2 else "      column_lists: [id]\n"
    project.write("models/dim.yml", "models:\n  - name: dim\n    config:\n" + in_yaml)
    fails(project, "`column_lists`", "did you mean `column_list`?")
    (project.path / "models" / "dim.yml").unlink()
    in_project = "    +meta:\n      checkpoint_colum: seq\n" if project.dbt_v2 else "    +checkpoint_colum: seq\n"
    settings = (project.path / "dbt_project.yml").read_text()
    project.write("dbt_project.yml", settings + "models:\n  cdc_test:\n" + in_project)
    fails(project, "`checkpoint_colum`", "did you mean `checkpoint_column`?")


def test_missing_required_config_with_a_near_miss_says_so(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **{k: v for k, v in CONFIG.items() if k != "keys"}, key=["id"])
    project.replace_rows("events", HISTORY)
    fails(project, "`keys` is required", "`key`", "did you mean `keys`?")
    project.model("dim", MODEL, **{k: v for k, v in CONFIG.items() if k != "keys"}, unique_key="id")
    fails(project, "`keys` is required", "A key `unique_key` is set: did you mean `keys`?")


def test_other_packages_and_dbt_configs_keep_working(project: CdcProject) -> None:
    project.create_table("events", EVENTS)
    project.model(
        "dim",
        MODEL,
        **CONFIG,
        tags=["cdc"],
        alias="dim",
        docs={"show": True},
        # Sharing one word with a config, or a word put before one (a package's own prefix).
        meta={
            "owner": "data-team",
            "keys_owner": "x",
            "sequence_owner": "y",
            "pii_column_list": ["name"],
            "partition_by": "team",  # under `meta`, dbt's config names are the user's metadata
        },
        unique_key="id",
        event_time="seq",
        on_configuration_change="apply",  # dbt's own, though one word from `on_schema_change`
        elementary={"timestamp_column": "seq"},
        sequence_owner="platform",
    )
    project.replace_rows("events", HISTORY)
    outcome = project.run("dim")
    assert outcome.metrics("dim") == (2, 0)
    # dbt's configs of other materializations do nothing here: named, not ignored silently.
    (warning,) = [w for w in outcome.warnings if "dbt's " in w]
    assert "`unique_key` is an incremental model's: auto_cdc's key is `keys`" in warning
    # dbt v2 takes this test's non-auto_cdc keys under `meta` (harness.DBT_CONFIGS): metadata there.
    assert ("`on_configuration_change` is a materialized view's" in warning) != project.dbt_v2
    assert "partition_by" not in warning and "event_time" not in warning and "tags" not in warning


def test_dbt_configs_that_do_not_apply_are_named_and_unlogged_fails(project: CdcProject) -> None:
    """Every dbt config an auto_cdc model cannot apply is named in one warning (docs/configuration.md,
    "dbt's own configs"); `unlogged`, which a crash would empty behind its state's back, fails."""
    project.create_table("events", EVENTS)
    layout = {"partition_by": ["name"], "location_root": "/tmp/elsewhere"} if project.adapter == "spark" else {}
    indexes = {} if project.adapter == "postgres" else {"indexes": [{"columns": ["name"]}]}
    spark_only = {} if project.adapter == "spark" or project.dbt_v2 else {"tblproperties": {"k": "v"}}
    project.model(
        "dim", MODEL, **CONFIG, incremental_strategy="merge", batch_size="day", **layout, **indexes, **spark_only
    )
    project.replace_rows("events", HISTORY)
    outcome = project.run("dim")
    (warning,) = [w for w in outcome.warnings if "dbt's " in w]
    assert "'dim'" in warning and "`incremental_strategy` is an incremental model's" in warning
    assert "`batch_size` is a microbatch model's" in warning
    if indexes:
        assert f"`indexes` do nothing on {project.adapter}" in warning
    if layout:
        assert "`partition_by` is not applied" in warning and "`location_root` is not applied" in warning
    if spark_only:
        assert f"`tblproperties` does nothing on {project.adapter} (Spark's tables take it)" in warning
    project.model("dim", MODEL, **CONFIG, unlogged=True)
    if project.dbt_v2:  # dbt v2 itself refuses PostgreSQL's config on DuckDB
        outcome = project.dbt("run", "--select", "dim")
        assert not outcome.success and '`"unlogged"`' in outcome.error, outcome.error
        return
    fails(project, "`unlogged`: auto_cdc does not build unlogged tables", "Remove it.")


@pytest.mark.parametrize("config", ["apply_as_deletes", "apply_as_truncates", "sequence_by"])
def test_expression_that_does_not_compile_names_its_config(project: CdcProject, config: str) -> None:
    project.create_table("events", EVENTS)
    broken = {
        "apply_as_deletes": "operation = 'D'",
        "apply_as_truncates": "operation = 'T'",
        "sequence_by": "seq + missing_column",
    }[config]
    project.model("dim", MODEL, **{**CONFIG, config: broken})
    project.replace_rows("events", HISTORY)
    fails(project, f"`{config}`", broken)


@pytest.mark.parametrize(
    ("config", "value"),
    [
        ("max_delete_fraction", -0.1),
        ("max_delete_fraction", 1.5),
        ("max_delete_fraction", "half"),
        ("allow_empty_snapshots", "yes"),
    ],
)
def test_invalid_snapshot_guard_configs_fail(project: CdcProject, config: str, value: Any) -> None:
    project.create_table("source", {"version": "bigint", "id": "integer", "city": "varchar"})
    snapshot_model(project, "per_run", **{config: value})
    fails(project, f"`{config}`", model="users")


@pytest.mark.parametrize(
    ("config", "value"), [("max_delete_fraction", 0.2), ("allow_empty_snapshots", True), ("replace_using", ["id"])]
)
def test_snapshot_configs_on_auto_cdc_fail(project: CdcProject, config: str, value: Any) -> None:
    project.create_table("events", EVENTS)
    project.model("dim", MODEL, **CONFIG, **{config: value})
    fails(project, f"`{config}` only applies to auto_cdc_from_snapshot")
