"""Domain values and pure rules (no I/O)."""
