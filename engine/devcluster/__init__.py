"""Local clusters for development and tests: the in-memory dev backend or the real control plane, with simulators."""
