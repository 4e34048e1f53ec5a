"""The supported versions are stated once and agree everywhere: setup.py, dbt_project.yml's
require-dbt-version, and the README."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import yaml

from harness import CdcProject

ROOT = Path(__file__).resolve().parents[1]


def _install_requires() -> dict[str, str]:
    """setup.py's install_requires as {distribution: version range}."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    setup = next(call for call in calls if getattr(call.func, "id", "") == "setup")
    requires = next(keyword.value for keyword in setup.keywords if keyword.arg == "install_requires")
    pins = [re.fullmatch(r"([A-Za-z0-9_.-]+)(.*)", ast.literal_eval(element)) for element in requires.elts]
    return {pin[1]: pin[2] for pin in pins if pin}


def test_dbt_core_range_agrees_everywhere() -> None:
    """dbt-core 1.10 to 1.12 as a Python package (setup.py); the package itself also under dbt v2
    2.0 (require-dbt-version), whose CLI is not installed through setup.py."""
    requires = _install_requires()
    assert requires["dbt-core"] == ">=1.10,<1.13"
    project = yaml.safe_load((ROOT / "dbt_project.yml").read_text())
    assert project["require-dbt-version"] == [">=1.10.0", "<2.1.0"]
    readme = (ROOT / "README.md").read_text()
    assert "dbt-core 1.10, 1.11 or 1.12" in readme and "dbt v2 2.0" in readme


def test_every_runtime_dependency_is_declared_with_a_range() -> None:
    requires = _install_requires()
    # numpy: DuckDB's create_function (the plugin) imports it; a fresh virtualenv lacks it otherwise.
    assert {"dbt-core", "dbt-duckdb", "dbt-postgres", "duckdb", "numpy"} <= set(requires)
    for name in ("dbt-duckdb", "dbt-postgres", "duckdb"):
        assert "<" in requires[name], f"{name} has no upper bound: {requires[name]}"


def test_the_lowest_versions_checked_are_the_lowest_admitted() -> None:
    script = (ROOT / "scripts" / "check_lowest_versions.sh").read_text()
    requires = _install_requires()
    for name, pin in (("dbt-core", "1.10"), ("dbt-duckdb", "1.10"), ("dbt-postgres", "1.10"), ("duckdb", "1.4")):
        assert f'"{name}~={pin}.0"' in script
        assert requires[name].startswith(f">={pin}")


def test_the_scripts_install_the_pinned_dbt_core_that_installs_from_pypi() -> None:
    """demo.sh and test.sh install with scripts/constraints.txt: dbt-core 1.12.0 and the parser
    wheel it takes (later 1.12 releases download their parser from GitHub while installing),
    inside setup.py's range."""
    pins = dict(
        line.split("==")
        for line in (ROOT / "scripts" / "constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert pins == {"dbt-core": "1.12.0", "dbt-core-experimental-parser": "2.0.0a4"}
    for script in ("demo.sh", "test.sh"):
        assert "-c scripts/constraints.txt" in (ROOT / "scripts" / script).read_text(), script
    assert _install_requires()["dbt-core"] == ">=1.10,<1.13"


def _config_fields(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The package's field table (macros/config/fields.sql), as dbt renders it."""
    project = CdcProject(tmp_path, "duckdb", None)
    project.write(
        "macros/fields.sql",
        "{% macro print_fields() %}{{ log(tojson(auto_cdc.config_fields()), info=true) }}{% endmacro %}",
    )
    outcome = project.dbt("run-operation", "print_fields")
    assert outcome.success, outcome.error
    return json.loads(outcome.logs[-1])


def _table_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of the first table after `heading`."""
    section = text[text.index(heading) :]
    rows = re.findall(r"^\|(.+)\|$", section[: section.index("\n\n", section.index("\n|"))], re.M)
    return [[cell.strip() for cell in row.split("|")] for row in rows[2:]]


def test_the_readme_documents_every_config_of_the_field_table(tmp_path: Path) -> None:
    """Each config is described once, in the field table; the README's tables follow it: the
    reference table lists every auto_cdc config with its default, the snapshot section names
    every snapshot config, and the table of changes between runs says for every recorded config
    whether a change fails, as the field table does. A new config missing from any of them fails."""
    fields = _config_fields(tmp_path)
    readme = (ROOT / "README.md").read_text()
    for name, field in fields.items():
        assert "recorded" in field, f"{name}: say how the run history records it (or none)"
        if field["recorded"]:
            assert {"blocks", "effect"} & set(field.get("change") or {}), f"{name}: say what a change between runs does"

    reference = {re.search(r"`(\w+)`", row[0])[1]: row[1] for row in _table_rows(readme, "## Configuration reference")}
    assert set(reference) == {name for name, field in fields.items() if field["for"] in ("both", "auto_cdc")}
    for name, default in reference.items():
        expected = fields[name]["default"]
        if expected is None:
            assert not re.match(r"`[^`]+`", default), f"{name}: the README gives a default, the field table none"
        else:
            literal = f"'{expected}'" if isinstance(expected, str) else json.dumps(expected)
            assert default.startswith(f"`{literal}`"), f"{name}: README default {default!r}, field table {literal}"

    snapshots = readme[readme.index("## `auto_cdc_from_snapshot`") : readme.index("## Flows")]
    for name, field in fields.items():
        if field["for"] in ("both", "snapshot"):
            assert f"`{name}" in snapshots, f"{name}: not in the README's auto_cdc_from_snapshot section"

    changes = {}
    for row in _table_rows(readme, "### Configuration changes between runs"):
        for name in re.findall(r"`(\w+)`", row[0]):
            changes[name] = row[1]
    for name, field in fields.items():
        assert name in changes, f"{name}: not in the README's table of configuration changes"
        blocks = bool((field.get("change") or {}).get("blocks"))
        assert (changes[name] == "fails") == blocks, (
            f"{name}: README says {changes[name]!r}, the field table blocks={blocks}"
        )


def test_the_readme_names_every_adapter_hook() -> None:
    """README, "Another adapter", lists every macro the package dispatches: a new hook missing
    from it fails here, so the next adapter's author sees every macro they may have to write."""
    hooks: set[str] = set()
    for path in (ROOT / "macros").rglob("*.sql"):
        hooks |= set(re.findall(r"adapter\.dispatch\('(\w+)', 'auto_cdc'\)", path.read_text()))
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Another adapter") : readme.index("## Performance")]
    assert "capabilities" in hooks
    missing = sorted(hook for hook in hooks if f"`{hook}`" not in section and f"__{hook}()`" not in section)
    assert not missing, f"not in the README's 'Another adapter': {missing}"


def test_the_readme_change_feed_consumer_is_the_example_projects_model() -> None:
    """README, "Change feed", shows integration_tests/models/users_per_city.sql (which
    test_change_feed.py runs on every adapter), but for its comments and layout."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Change feed") :]
    shown = re.search(r"```sql\n(.*?)```", section, re.S)[1]
    model = (ROOT / "integration_tests" / "models" / "users_per_city.sql").read_text()
    code = "\n".join(line for line in model.splitlines() if not line.startswith("--"))
    assert re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", code)
