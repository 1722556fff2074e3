"""Typed request bodies, one model per operation (see ``base.parse_body``)."""
