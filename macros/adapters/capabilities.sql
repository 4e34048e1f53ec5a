{#- What an adapter can do, answered in one place per adapter (`<adapter>__capabilities`, in
    this folder), and the gate an adapter the package does not know stops at. Later stages ask
    `auto_cdc.capabilities()`, never the adapter's name; the defaults of the dispatched hooks
    follow these answers and raise where an answer needs an adapter's own hook (docs/extending.md). -#}

{% macro capabilities() -%}
  {{ return(adapter.dispatch('capabilities', 'auto_cdc')()) }}
{%- endmacro %}


{% macro capability_fields() -%}
  {#- Every answer an adapter gives, and what it means (the keys of `<adapter>__capabilities`). -#}
  {{ return({
      'adapter': "the adapter these answers are for: dbt's dispatch also finds a parent adapter's (`postgres__` for Redshift), whose answers are not this adapter's",
      'transactions': "true if dbt's connection holds the model's statements in one transaction that finish_run's commit ends (false: no transactions; the run history row written last is the commit point, with concurrency 'fence')",
      'concurrency': "how two runs of one model are kept apart: 'single_writer' (the engine lets one writer in at a time), 'lock' (`lock_target` takes a lock) or 'fence' (`read_fence` detects a concurrent commit)",
      'run_clock': "when the run's clock reads: 'transaction_start' (current_timestamp in the run's transaction), else `run_clock` returns it",
      'compares_every_type': "true if `=` is exact on every column type (false: `columns_compared_as_text` names the columns compared as text)",
      'type_of': "SQL giving an expression's type name, with {} for the expression (e.g. 'typeof({})')",
      'indexes': "true if the tables get indexes (`key_index_sql`, `tombstone_index_sql`)",
      'max_identifier_length': "the longest table or index name",
      'max_decimal_precision': "the most digits a decimal can hold",
      'snapshot_functions': "true if `snapshot_version_function` can be called (`call_snapshot_function`)",
      'rebuild_drops_sequence_type': "true if a rebuild drops and creates again the type a composite sequence is stored as",
      'untested_features': "features refused before writing because they are not tested here: any of 'change_feed', 'flows', 'contract', 'file_format' (configs), 'debezium' (the macro)",
  }) }}
{%- endmacro %}


{% macro default__capabilities() -%}
  {%- do exceptions.raise_compiler_error(
        auto_cdc._gate_prefix() ~ "auto_cdc does not know the adapter '" ~ adapter.type()
        ~ "' (it runs on duckdb, postgres and spark); nothing was written. To add it, define `"
        ~ adapter.type() ~ "__capabilities()` returning a dict with these keys (docs/extending.md):\n  - "
        ~ auto_cdc._capability_lines() ~ "\nthen the hooks those answers ask for, and run the test suite against it.") -%}
{%- endmacro %}


{% macro check_adapter() -%}
  {#- Before anything else runs: the adapter is known, and its answers are complete. -#}
  {%- set answers = auto_cdc.capabilities() -%}
  {%- set missing = [] -%}
  {%- for name in auto_cdc.capability_fields() if name not in answers -%}{%- do missing.append(name) -%}{%- endfor -%}
  {%- if missing -%}
    {%- do exceptions.raise_compiler_error(
          auto_cdc._gate_prefix() ~ "`" ~ adapter.type() ~ "__capabilities()` does not answer "
          ~ missing | join(', ') ~ "; nothing was written. Every adapter answers all of:\n  - " ~ auto_cdc._capability_lines()) -%}
  {%- endif -%}
  {%- set problems = [] -%}
  {%- if answers.adapter != adapter.type() -%}
    {%- do problems.append("the answers found are " ~ answers.adapter ~ "'s, not " ~ adapter.type() ~ "'s (dbt's dispatch falls back to a parent adapter's macros):"
        ~ " define `" ~ adapter.type() ~ "__capabilities()`, returning " ~ answers.adapter ~ "'s answers with 'adapter': '" ~ adapter.type() ~ "' once they hold there") -%}
  {%- endif -%}
  {%- if answers.concurrency not in ['single_writer', 'lock', 'fence'] -%}
    {%- do problems.append("concurrency is '" ~ answers.concurrency ~ "'; answer 'single_writer', 'lock' or 'fence'") -%}
  {%- elif not answers.transactions and answers.concurrency != 'fence' -%}
    {%- do problems.append("without transactions a concurrent run can only be detected: answer concurrency 'fence'") -%}
  {%- endif -%}
  {%- set unknown = [] -%}
  {%- for feature in answers.untested_features if feature not in ['change_feed', 'flows', 'contract', 'file_format', 'debezium'] -%}{%- do unknown.append(feature) -%}{%- endfor -%}
  {%- if unknown -%}
    {%- do problems.append("untested_features names " ~ unknown | join(', ') ~ "; the features are 'change_feed', 'flows', 'contract', 'file_format' and 'debezium'") -%}
  {%- endif -%}
  {%- if problems -%}
    {%- do exceptions.raise_compiler_error(auto_cdc._gate_prefix() ~ "`" ~ adapter.type() ~ "__capabilities()` cannot be used; nothing was written.\n  - "
          ~ problems | join('\n  - ')) -%}
  {%- endif -%}
{%- endmacro %}


{% macro missing_hook(hook, answer) -%}
  {#- The default of a hook whose behaviour an adapter's answer leaves to the adapter. -#}
  {%- do exceptions.raise_compiler_error(
        auto_cdc._gate_prefix() ~ "adapter '" ~ adapter.type() ~ "' answers " ~ answer
        ~ " in its capabilities, so it needs its own `" ~ adapter.type() ~ "__" ~ hook ~ "` (docs/extending.md); nothing was written.") -%}
{%- endmacro %}


{% macro _capability_lines() -%}
  {%- set lines = [] -%}
  {%- for name, meaning in auto_cdc.capability_fields().items() -%}
    {%- do lines.append(name ~ ": " ~ meaning) -%}
  {%- endfor -%}
  {{ return(lines | join('\n  - ')) }}
{%- endmacro %}


{% macro _gate_prefix() -%}
  {#- These errors can come from `dbt run-operation` too, where no model is running. -#}
  {{ return("auto_cdc: model '" ~ model.name ~ "': " if model is defined and model and model.name else "auto_cdc: ") }}
{%- endmacro %}
