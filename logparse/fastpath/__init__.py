"""The fast, streaming ingest: the same tables as the reference parser, read block by block.

* `blocks`    blocks of complete lines (`reader.iter_blocks`, re-exported) and a spool for pipes
* `plan`      compose each engine's `[[fast_envelope]]` prefixes with its rules into anchored Rust
              patterns (`translate` turns grammar regexes into Rust syntax)
* `chunk`     parse one block: lines the fast rules read are extracted vectorised with polars,
              every other line goes through `LineParser`
* `times`     `time` from `ts` column by column, with `TimeParser`'s rules (year, rollovers)
* `sinks`     tables to memory or to Parquet, a row group at a time
* `stream`    the driver: engine detection, blocks, restarts when the year is learnt late
* `run`, `dataset`, `progress`, `profile`: the CLI's single-log and many-log paths, the progress
  bar, and the per-stage CPU profile (`LOGPARSE_PROFILE=1`)

`tests/speed` checks that fast and reference paths give identical tables.
"""
