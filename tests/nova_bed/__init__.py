"""A real Nova for the tests (issue 23): see tests/nova_bed/bed.py and docs/testing.md."""
