"""Drivers that make and destroy the real resources behind nodes."""
