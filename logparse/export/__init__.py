"""Export runs to the tools users already run: the engines' Prometheus metrics (`logparse export`).

`catalog` maps each log field to an engine metric (name, type, HELP, source), `rows` selects and
labels the event rows of each engine era, `counters` rebuilds counters, `series` builds one run's
series, `openmetrics` renders them, `promtool` backfills a TSDB, `cli` is the click group.
"""
