"""A local, in-memory Kubernetes API server: discovery, CRUD, server-side apply, patches, watch, GC, CRDs."""
