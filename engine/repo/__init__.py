"""Distributing packages: repository indexes, the user's repositories, version choice and OCI registries."""
