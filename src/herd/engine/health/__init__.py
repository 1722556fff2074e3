"""The health manager: checks the members of clusters with a health policy, recovers failures."""
