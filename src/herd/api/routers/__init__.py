"""One router per resource; each is thin and calls into ``herd.api.services``."""
