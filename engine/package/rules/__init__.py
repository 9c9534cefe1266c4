"""Verification rules: each is a function from the parsed package (Docs) to the Problems it finds."""
