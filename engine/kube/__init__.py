"""The only package that talks to the Kubernetes API (server-side apply, caches, watch, status, events)."""
