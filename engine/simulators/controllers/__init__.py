"""Built-in controllers for the dev backend only (the real control plane runs its own): workloads and Jobs."""
