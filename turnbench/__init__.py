"""turnbench: reproducible evaluation of meeting-transcript search."""

__version__ = "0.1.0"
