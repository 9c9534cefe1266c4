"""A local, in-memory Kubernetes API server for development and tests, with kwok-like simulators."""
