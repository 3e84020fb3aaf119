"""The package version; release wheels replace this file with their own."""

__version__ = "0.0.0.dev0"
