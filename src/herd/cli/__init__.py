"""The ``herd`` command line: server commands and an HTTP client for the API."""
