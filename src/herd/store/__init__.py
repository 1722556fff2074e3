"""Persistence: table mappings, repositories, migrations. Only this package maps rows."""
