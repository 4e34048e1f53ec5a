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


{% macro stage_done(stage, started) -%}
  {#- A line when a stage of the run ends ('batch read', 'checks', 'tables', 'writes'), with
      its duration: shown when it took 5 seconds or more, so a long run says where its time
      goes; in the debug log (logs/dbt.log) otherwise. Returns the time it ended, when the
      next stage starts (`started`: stage_clock() or the previous stage_done). -#}
  {%- set ended = auto_cdc.stage_clock() -%}
  {%- set seconds = (ended - started).total_seconds() -%}
  {%- do log("auto_cdc: " ~ model.name ~ ": " ~ stage ~ " took " ~ '%.1f' | format(seconds) ~ " s", info=seconds >= 5) -%}
  {{ return(ended) }}
{%- endmacro %}

{% macro stage_clock() -%}
  {{ return(modules.datetime.datetime.now()) }}
{%- endmacro %}
