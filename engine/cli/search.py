"""`kplan search WORD [--versions]`: registered by the repository commands' module."""

from engine.cli.repo import register_search as register

__all__ = ["register"]
