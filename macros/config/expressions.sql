{#- Stage 1, configuration: expression configs. In: `cfg.expressions` and the model query. Out:
    nothing, or an error naming the config whose SQL does not compile. -#}

{% macro check_expressions(cfg, sql) -%}
  {#- Expression configs are SQL pasted into the batch query. One that does not compile against
      the model query's columns fails here, naming the config, instead of as a raw error of a
      generated statement. (The database's own message cannot be kept: dbt's Jinja has no
      try/except, only try_or_compiler_error.) -#}
  {%- set queries = [] -%}
  {%- for flow in cfg.flows -%}
    {#- A change feed's events are classified and ordered on its own rows; a snapshot flow's by its version. -#}
    {%- do queries.append({'rows': "the rows of flow '" ~ flow.name ~ "'", 'sql': flow.sql, 'columns': flow.columns,
                           'expressions': [('version', flow.version)] if flow.kind == 'snapshot' else cfg.expressions}) -%}
  {%- else -%}
    {%- do queries.append({'rows': "the model query's rows", 'sql': sql, 'columns': cfg.source_columns, 'expressions': cfg.expressions}) -%}
  {%- endfor -%}
  {%- for query in queries -%}
    {%- for name, expr in query.expressions -%}
      {%- set message = auto_cdc.about_model(cfg.model_name) ~ "`" ~ name ~ "` (" ~ expr ~ ") cannot be evaluated on " ~ query.rows ~ ";"
          ~ " nothing was written. It is SQL over their columns (" ~ (query.columns | join(', '))
          ~ "): check the column names, their quoting (PostgreSQL folds unquoted names to lower case) and the syntax." -%}
      {%- set probe -%}select ({{ expr }}) as probe from ({{ query.sql }}) as src where false{%- endset -%}
      {%- do try_or_compiler_error(message, run_query, probe) -%}
    {%- endfor -%}
  {%- endfor -%}
{%- endmacro %}
