{#- Stages 6 to 8's one input: the run context. In: the configuration, the model's relations
    and what stages 1 to 5 found. Out: one dict that the resolve, apply and record macros read
    (`run`), built once per run, here, with every key always present. -#}

{% macro run_context(cfg, target, cdc_tables, temps, facts) -%}
  {#- `cfg`: the configuration (read_cdc_config). `target`, `cdc_tables` (state_relations) and
      `temps` (temp_relations): the relations. `facts`, every one required, nothing else:
        now              SQL for the run's clock (run_clock, read once per run)
        full_refresh     true when the run creates or rebuilds the model's tables
        shape            validate_batch's counts: n_events, n_identities, n_truncates, n_deletes, n_quarantined, flows
        known_columns    the appended columns the stored SCD2 events know of (evolved_state)
        state_layout     SCD1's state layout (chosen_state_layout), none for SCD2
        fence            read_fence's answer, none where a transaction is the fence
        replaced_rows    rows of the old target a full refresh replaces (replaced_rows)
        change_feed      the change feed's frame (prepared_change_feed), none when off
        previous_checkpoint  the last run's checkpoint value, none without one
        truncated_before     true when an earlier run recorded a truncate watermark
        state_files      read_state_files' answer (SCD1 on Spark), none elsewhere
        carried_tombstones   the live tombstones to count on from (carried_tombstones), or none
      A missing or unknown fact is a mistake of the materialization: it fails here, not as an
      undefined value deep inside a statement. -#}
  {%- set required = ['now', 'full_refresh', 'shape', 'known_columns', 'state_layout', 'fence',
                      'replaced_rows', 'change_feed', 'previous_checkpoint', 'truncated_before', 'state_files',
                      'carried_tombstones'] -%}
  {%- set given = facts.keys() | list -%}
  {%- set missing = required | reject('in', given) | list -%}
  {%- set unknown = given | reject('in', required) | list -%}
  {%- if missing or unknown -%}
    {%- do exceptions.raise_compiler_error("auto_cdc.run_context: missing facts " ~ missing ~ ", unknown facts " ~ unknown) -%}
  {%- endif -%}
  {%- set run = {'cfg': cfg, 'target': target, 'state': cdc_tables.state, 'runs': cdc_tables.runs,
                 'batch': temps.batch, 'history': temps.history, 'changes': temps.changes,
                 'raw': temps.raw, 'bad': temps.bad, 'quarantine': cdc_tables.quarantine,
                 'truncating': facts.shape.n_truncates > 0, 'flows': facts.shape.flows} -%}
  {%- do run.update(facts) -%}
  {{ return(run) }}
{%- endmacro %}
