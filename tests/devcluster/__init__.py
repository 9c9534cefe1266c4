"""Conformance of the dev cluster with the real API server, through the official client."""
