"""What operators see of a running herd: Prometheus metrics and structured logs.

A leaf package (it imports nothing else from herd), so that every layer may
record into it: the engine counts actions and hook waits, the API counts
requests, and both set the log context of the line being written.
"""
