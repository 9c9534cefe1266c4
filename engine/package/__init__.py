"""Operator packages: the typed model, loading from folder/tgz/URL, and verification."""
