"""Request bodies as pydantic models, one per body, parsed with Senlin's error texts."""
