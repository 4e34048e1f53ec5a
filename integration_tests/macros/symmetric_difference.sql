{% macro symmetric_difference(actual, expected) %}
  (select * from {{ actual }} except select * from {{ expected }})
  union all
  (select * from {{ expected }} except select * from {{ actual }})
{% endmacro %}
