"""Request validation and row/action creation, one module per resource family."""
