"""Tiny modules with known graph breaks: the oracle bench's CI slice (written for it)."""
