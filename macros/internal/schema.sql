{#- The model query's columns, the checkpoint filter, and what a new source column does. -#}

{% macro query_columns(sql, probe) -%}
  {#- Names and types of the model query's columns, from an empty temp table (no rows are read). -#}
  {%- call statement('auto_cdc_probe') -%}
    {{ auto_cdc.create_temp_table(probe, 'select * from (' ~ sql ~ ') as src limit 0') }}
  {%- endcall -%}
  {%- set columns = adapter.get_columns_in_relation(probe) -%}
  {%- do adapter.drop_relation(probe) -%}
  {{ return(columns) }}
{%- endmacro %}


{% macro checkpoint_filter(cfg, previous, source_columns) -%}
  {#- Only rows strictly above the highest checkpoint value already applied. Without a stored
      value for this checkpoint column (first run, full refresh, column changed): read all. -#}
  {%- if not cfg.checkpoint_column or previous is none or previous.checkpoint_column != cfg.checkpoint_column
        or previous.checkpoint_value is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set data_type = (source_columns | selectattr('name', 'equalto', cfg.checkpoint_column) | first).data_type -%}
  {{ return('src.' ~ auto_cdc.quote_identifier(cfg.checkpoint_column) ~ ' > cast('
            ~ auto_cdc.string_literal(previous.checkpoint_value) ~ ' as ' ~ data_type ~ ')') }}
{%- endmacro %}


{% macro reconcile_schema(cfg, target, batch, state) -%}
  {#- on_schema_change: a written column the target does not have yet is appended, ignored, or
      fails the run. Columns the source no longer returns stay in the target: updates keep
      their values, inserts leave them NULL. Returns the configuration with the columns to write. -#}
  {%- set target_columns = adapter.get_columns_in_relation(target) | map(attribute='name') | map('lower') | list -%}
  {%- set built_as = '1' if '__start_at' not in target_columns else ('bitemporal' if '__system_start_at' in target_columns else '2') -%}
  {%- if built_as != cfg.scd_type -%}
    {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': `stored_as_scd_type` changed to " ~ cfg.scd_type
        ~ " since " ~ target ~ " was built; nothing was written. Rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- endif -%}
  {%- for key in cfg.key_columns -%}
    {%- if key | lower not in target_columns -%}
      {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': key column '" ~ key
          ~ "' is not in the existing table " ~ target ~ "; nothing was written. The keys changed: rebuild with `dbt run --full-refresh -s "
          ~ cfg.model_name ~ "`.") -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set new_columns = [] -%}
  {%- for column in cfg.value_columns -%}
    {%- if column | lower not in target_columns -%}{%- do new_columns.append(column) -%}{%- endif -%}
  {%- endfor -%}
  {%- if not new_columns -%}{{ return(cfg) }}{%- endif -%}

  {%- if cfg.on_schema_change == 'fail' -%}
    {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ cfg.model_name ~ "': the model query has new column(s) "
        ~ (new_columns | join(', ')) ~ " that " ~ target ~ " lacks, and on_schema_change='fail'; nothing was written. "
        ~ "Set on_schema_change='append_new_columns' or rebuild with `dbt run --full-refresh -s " ~ cfg.model_name ~ "`.") -%}
  {%- elif cfg.on_schema_change == 'append_new_columns' -%}
    {%- set additions = [] -%}
    {%- for column in adapter.get_columns_in_relation(batch) -%}
      {%- if column.name in new_columns -%}{%- do additions.append({'name': column.name, 'data_type': column.data_type}) -%}{%- endif -%}
    {%- endfor -%}
    {%- do log("auto_cdc: " ~ cfg.model_name ~ ": adding column(s) " ~ (new_columns | join(', ')) ~ " to " ~ target, info=true) -%}
    {%- do auto_cdc.run_statements(auto_cdc.add_columns(target, additions)) -%}
    {%- if cfg.scd_type != '1' -%}
      {#- The stored events never carried the new column: NULL, and marked as not known. -#}
      {%- set known = [] -%}
      {%- for column in new_columns -%}
        {%- do known.append({'name': auto_cdc.event_known(column), 'data_type': dbt.type_boolean()}) -%}
      {%- endfor -%}
      {%- do auto_cdc.run_statements(auto_cdc.add_columns(state, additions + known)) -%}
    {%- endif -%}
    {{ return(cfg) }}
  {%- endif -%}

  {#- 'ignore': write only the columns the target has. -#}
  {%- set kept = [] -%}
  {%- for column in cfg.value_columns -%}{%- if column not in new_columns -%}{%- do kept.append(column) -%}{%- endif -%}{%- endfor -%}
  {%- set ignore_null_columns = cfg.ignore_null_columns | reject('in', new_columns) | list -%}
  {%- do cfg.update({'value_columns': kept, 'written_columns': cfg.key_columns + kept, 'ignore_null_columns': ignore_null_columns}) -%}
  {{ return(cfg) }}
{%- endmacro %}
