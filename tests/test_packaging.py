"""The supported versions are stated once and agree everywhere: setup.py (its adapter extras),
dbt_project.yml's require-dbt-version, the scripts' pins and the README's install lines."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

import yaml
from packaging.specifiers import SpecifierSet

import auto_cdc
from harness import CdcProject

ROOT = Path(__file__).resolve().parents[1]


def _setup_argument(name: str) -> Any:
    """A literal argument of setup.py's setup() call."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    setup = next(call for call in calls if getattr(call.func, "id", "") == "setup")
    return ast.literal_eval(next(keyword.value for keyword in setup.keywords if keyword.arg == name))


def _ranges(requirements: list[str]) -> dict[str, str]:
    """Requirements as {distribution (extras stripped): version range}."""
    pins = [re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[a-z,]+\])?(.*)", requirement) for requirement in requirements]
    return {pin[1]: pin[2] for pin in pins if pin}


def _install_requires() -> dict[str, str]:
    return _ranges(_setup_argument("install_requires"))


def _extras() -> dict[str, dict[str, str]]:
    return {extra: _ranges(requirements) for extra, requirements in _setup_argument("extras_require").items()}


def _constraints() -> dict[str, str]:
    lines = (ROOT / "scripts" / "constraints.txt").read_text().splitlines()
    return dict(line.split("==") for line in lines if line and not line.startswith("#"))


def test_dbt_core_range_agrees_everywhere() -> None:
    """dbt-core 1.10 to 1.12 as a Python package (setup.py); the package itself also under dbt v2
    2.0 (require-dbt-version), whose CLI is not installed through setup.py."""
    requires = _install_requires()
    assert requires["dbt-core"] == ">=1.10,<1.13"
    project = yaml.safe_load((ROOT / "dbt_project.yml").read_text())
    assert project["require-dbt-version"] == [">=1.10.0", "<2.1.0"]
    readme = (ROOT / "README.md").read_text()
    assert "dbt-core 1.10, 1.11 or 1.12" in readme and "dbt v2 2.0" in readme


def test_each_adapter_is_an_extra_and_every_runtime_dependency_has_a_range() -> None:
    """A user installs the adapter they use (`dbt-auto-cdc[duckdb]`, `[postgres]`, `[spark]`),
    not the others; everyone gets dbt-core. dev, typecheck and dev-debezium are for the package's tests."""
    assert _install_requires() == {"dbt-core": ">=1.10,<1.13"}
    extras = _extras()
    assert set(extras) == {"duckdb", "postgres", "spark", "dev", "typecheck", "dev-debezium"}
    # numpy: DuckDB's create_function (the plugin) imports it; a fresh virtualenv lacks it otherwise.
    assert set(extras["duckdb"]) == {"dbt-duckdb", "duckdb", "numpy"}
    assert set(extras["postgres"]) == {"dbt-postgres"}
    assert set(extras["spark"]) == {"dbt-spark", "pyspark", "snowpark-connect-deps-iceberg"}
    assert "dbt-spark[session]" in " ".join(_setup_argument("extras_require")["spark"])  # the local session
    for adapter in ("duckdb", "postgres", "spark"):
        for name, version_range in extras[adapter].items():
            assert name == "numpy" or "<" in version_range, f"{name} has no upper bound: {version_range}"
    readme = (ROOT / "README.md").read_text()
    for adapter in ("duckdb", "postgres", "spark"):
        assert f"`{adapter}`" in readme[readme.index("### Use it in your project") : readme.index("### A first model")]


def test_the_scripts_install_the_extras_they_need() -> None:
    """test.sh: every adapter and the test tools (the Spark tier's extra unless it is left out);
    demo.sh: DuckDB and the plugin; the lowest-versions check: DuckDB, PostgreSQL, the tools
    without mypy (it needs a pathspec dbt-core 1.10 excludes)."""
    scripts = ROOT / "scripts"
    assert 'extras="duckdb,postgres,dev,typecheck,dev-debezium"' in (scripts / "test.sh").read_text()
    assert 'extras="$extras,spark"' in (scripts / "test.sh").read_text()
    assert '-e ".[duckdb]"' in (scripts / "demo.sh").read_text()
    assert '-e ".[duckdb,postgres,dev]"' in (scripts / "check_lowest_versions.sh").read_text()


def test_the_lowest_versions_checked_are_the_lowest_admitted() -> None:
    script = (ROOT / "scripts" / "check_lowest_versions.sh").read_text()
    requires = {**_install_requires(), **_extras()["duckdb"], **_extras()["postgres"]}
    for name, pin in (("dbt-core", "1.10"), ("dbt-duckdb", "1.10"), ("dbt-postgres", "1.10"), ("duckdb", "1.4")):
        assert f'"{name}~={pin}.0"' in script
        assert requires[name].startswith(f">={pin}")


def test_the_scripts_install_the_pinned_versions_inside_the_ranges() -> None:
    """demo.sh and test.sh install with scripts/constraints.txt: dbt-core 1.12.0 and the parser
    wheel it takes (later 1.12 releases download their parser from GitHub while installing), and
    the versions the Spark tier is tested with, each inside setup.py's range."""
    pins = _constraints()
    assert pins == {
        "dbt-core": "1.12.0",
        "dbt-core-experimental-parser": "2.0.0a4",
        "dbt-spark": "1.11.0",
        "pyspark": "3.5.8",
        "snowpark-connect-deps-iceberg": "1.0.3",
    }
    for script in ("demo.sh", "test.sh"):
        assert "-c scripts/constraints.txt" in (ROOT / "scripts" / script).read_text(), script
    ranges = {**_install_requires(), **_extras()["spark"]}
    for name, version in pins.items():
        if name in ranges:
            assert SpecifierSet(ranges[name]).contains(version), f"{name}=={version} outside {ranges[name]}"


def _version() -> str:
    """The one version: dbt_project.yml's."""
    return str(yaml.safe_load((ROOT / "dbt_project.yml").read_text())["version"])


def test_one_version_in_dbt_project_the_distribution_and_the_changelog() -> None:
    """setup.py reads dbt_project.yml's version (so the installed distribution and
    auto_cdc.__version__ carry it); CHANGELOG.md's first version heading is that version, with
    only `## Unreleased` allowed above it; the licence the hub requires is at the root."""
    version = _version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    assert auto_cdc.__version__ == version == importlib.metadata.version("dbt-auto-cdc")
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    released = [heading for heading in headings if heading != "Unreleased"]
    assert released and released[0].split()[0] == version, headings[:2]
    assert headings.index(released[0]) <= 1 and (headings.index(released[0]) == 0 or headings[0] == "Unreleased")
    assert "Apache License" in (ROOT / "LICENSE").read_text() and _setup_argument("license") == "Apache-2.0"


def test_the_readme_installs_the_current_version_by_its_tag_with_the_scripts_pins() -> None:
    """README, "Use it in your project": packages.yml and pip name the tag of the version
    (dbt_project.yml's), and pip takes the constraints file of that tag; every pin the README
    names is the constraints file's."""
    version = _version()
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Use it in your project") : readme.index("### A first model")]
    assert f"revision: v{version}\n" in section and "revision: main" not in readme
    assert f'"dbt-auto-cdc[duckdb] @ git+https://github.com/<org>/dbt-auto-cdc.git@v{version}"' in section
    assert f"-c https://raw.githubusercontent.com/<org>/dbt-auto-cdc/v{version}/scripts/constraints.txt" in section
    assert "-c path/to/dbt-auto-cdc/scripts/constraints.txt" in section
    assert "`<org>` is" in section  # what to write in its place
    words = " ".join(section.split())
    for name, version_pinned in _constraints().items():
        assert re.search(rf"{re.escape(name)}`? {re.escape(version_pinned)}\b", words), (name, version_pinned)


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


def test_the_docs_document_every_config_of_the_field_table(tmp_path: Path) -> None:
    """Each config is described once, in the field table; the manual's tables follow it: the
    reference table of docs/configuration.md lists every auto_cdc config with its default,
    docs/snapshots.md names every snapshot config, and the table of changes between runs
    (docs/configuration.md) says for every recorded config whether a change fails, as the field
    table does. A new config missing from any of them fails."""
    fields = _config_fields(tmp_path)
    configuration = (ROOT / "docs" / "configuration.md").read_text()
    for name, field in fields.items():
        assert "recorded" in field, f"{name}: say how the run history records it (or none)"
        if field["recorded"]:
            assert {"blocks", "effect"} & set(field.get("change") or {}), f"{name}: say what a change between runs does"

    reference_rows = _table_rows(configuration, "# Configuration reference")
    reference = {re.search(r"`(\w+)`", row[0])[1]: row[1] for row in reference_rows}
    assert set(reference) == {name for name, field in fields.items() if field["for"] in ("both", "auto_cdc")}
    for name, default in reference.items():
        expected = fields[name]["default"]
        if expected is None:
            assert not re.match(r"`[^`]+`", default), (
                f"{name}: docs/configuration.md gives a default, the field table none"
            )
        else:
            literal = f"'{expected}'" if isinstance(expected, str) else json.dumps(expected)
            assert default.startswith(f"`{literal}`"), (
                f"{name}: docs/configuration.md default {default!r}, field table {literal}"
            )

    snapshots = (ROOT / "docs" / "snapshots.md").read_text()
    for name, field in fields.items():
        if field["for"] in ("both", "snapshot"):
            assert f"`{name}" in snapshots, f"{name}: not in docs/snapshots.md"

    changes = {}
    for row in _table_rows(configuration, "## Configuration changes between runs"):
        for name in re.findall(r"`(\w+)`", row[0]):
            changes[name] = row[1]
    for name, field in fields.items():
        assert name in changes, f"{name}: not in docs/configuration.md's table of configuration changes"
        blocks = bool((field.get("change") or {}).get("blocks"))
        assert (changes[name] == "fails") == blocks, (
            f"{name}: docs/configuration.md says {changes[name]!r}, the field table blocks={blocks}"
        )


def test_the_docs_name_every_adapter_hook() -> None:
    """docs/extending.md ("Another adapter") lists every macro the package dispatches: a new hook
    missing from it fails here, so the next adapter's author sees every macro they may have to write."""
    hooks: set[str] = set()
    for path in (ROOT / "macros").rglob("*.sql"):
        hooks |= set(re.findall(r"adapter\.dispatch\('(\w+)', 'auto_cdc'\)", path.read_text()))
    section = (ROOT / "docs" / "extending.md").read_text()
    assert "capabilities" in hooks
    missing = sorted(hook for hook in hooks if f"`{hook}`" not in section and f"__{hook}()`" not in section)
    assert not missing, f"not in docs/extending.md: {missing}"


def test_the_docs_change_feed_consumer_is_the_example_projects_model() -> None:
    """docs/change-feed.md shows integration_tests/models/users_per_city.sql (which
    test_change_feed.py runs on every adapter), but for its comments and layout."""
    section = (ROOT / "docs" / "change-feed.md").read_text()
    shown = re.search(r"```sql\n(.*?)```", section, re.S)[1]
    model = (ROOT / "integration_tests" / "models" / "users_per_city.sql").read_text()
    code = "\n".join(line for line in model.splitlines() if not line.startswith("--"))
    assert re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", code)


# The manual's pages and the top-level documents whose relative links must resolve.
LINKED_DOCUMENTS = ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md", "CHANGELOG.md", "RELEASE.md", "docs/*.md"]


def _github_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a document's headings: lowercase, punctuation but `-` and `_`
    dropped, spaces to `-`; a repeated heading gets `-1`, `-2`, ..."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M):
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        unique, n = anchor, 0
        while unique in anchors:
            n += 1
            unique = f"{anchor}-{n}"
        anchors.add(unique)
    return anchors


def _relative_links(text: str) -> list[str]:
    """Every link target of a Markdown text that is not a URL, outside code."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    prose = re.sub(r"`[^`]*`", "code", prose)
    targets = re.findall(r"\]\(([^)\s]+)\)", prose)
    return [target for target in targets if not re.match(r"[a-z][a-z+.-]*:", target)]


def test_docs_links_resolve() -> None:
    """Every relative link in the README, the manual (docs/) and the other top-level documents
    names a file that exists and, with `#anchor`, a heading of that file."""
    documents = sorted({path for pattern in LINKED_DOCUMENTS for path in ROOT.glob(pattern)})
    assert ROOT / "docs" / "README.md" in documents and len(documents) > 10
    broken = []
    for document in documents:
        for target in _relative_links(document.read_text()):
            path, _, anchor = target.partition("#")
            linked = (document.parent / path).resolve() if path else document
            where = f"{document.relative_to(ROOT)}: ({target})"
            if not linked.exists():
                broken.append(f"{where}: no such file")
            elif anchor and (linked.is_dir() or anchor not in _github_anchors(linked.read_text())):
                broken.append(f"{where}: no heading #{anchor} there")
    assert not broken, "\n".join(broken)
