"""Volume provisioning, simulated on both backends: claims of the simulated StorageClass get a volume."""
