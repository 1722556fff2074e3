"""The ``os.heat.stack`` profile type: a node is a Heat stack."""
