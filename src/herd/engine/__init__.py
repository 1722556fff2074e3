"""The engine: claims stored actions and runs them (locks, policy checks, drivers, events)."""
