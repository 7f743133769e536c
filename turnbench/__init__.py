"""turnbench: reproducible evaluation of meeting-transcript search."""

from turnbench.version import __version__

__all__ = ["__version__"]
