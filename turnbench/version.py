"""The package version: a module of its own, so that a room can read it without importing the package root (which
offers the façade and would otherwise pull every room in behind it)."""

__version__ = "0.1.0"
