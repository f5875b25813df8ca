"""`logparse follow`: a log watched as the engine writes it.

The compiled core reads the followed file (`ingest.tail`) block by block and hands each block's
tables to `sink.FollowSink`, which keeps the recent rows (`tables`), turns them into the status
(`status`), the alerts (`alerts`) and the engine's metrics (`export.live`), and `run.follow_log`
ties it together with the outputs (`outputs`: the terminal, plain lines, JSON lines, an alert
command; `metrics_server`: `/metrics`) and the post-mortem when following stops.
"""

from __future__ import annotations
