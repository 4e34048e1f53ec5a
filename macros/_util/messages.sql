{#- Every error and warning names the model first ("auto_cdc: model 'users': ..."), so a user
    reading a run of many models knows whose it is. -#}

{% macro about_model(model_name) -%}
  {{ return("auto_cdc: model '" ~ model_name ~ "': ") }}
{%- endmacro %}


{% macro model_error(model_name, message) -%}
  {#- A Compilation Error: the project (config, query, a table the model needs) must change. -#}
  {%- do exceptions.raise_compiler_error(auto_cdc.about_model(model_name) ~ message) -%}
{%- endmacro %}


{% macro model_warning(model_name, message) -%}
  {#- A dbt warning (JinjaLogWarning: `--warn-error` makes it fail the run). -#}
  {%- do exceptions.warn(auto_cdc.about_model(model_name) ~ message) -%}
{%- endmacro %}


{% macro configuration_errors(model_name, problems) -%}
  {#- Every problem of a model's configuration at once, before anything is written. -#}
  {%- do exceptions.raise_compiler_error("auto_cdc: model '" ~ model_name ~ "' is not configured correctly; nothing was written.\n  - "
        ~ (problems | join('\n  - '))) -%}
{%- endmacro %}
