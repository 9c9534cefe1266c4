"""The `kplan` / `kubectl kplan` command line: commands parse, call the engine, and print."""
