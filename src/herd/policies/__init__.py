"""Pure policy decisions: scaling, placement, deletion, health."""
