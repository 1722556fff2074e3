"""The regional agent: reconciles one region's copies with central (``herd agent``)."""
