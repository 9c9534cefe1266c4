"""The kubelet's side, simulated on both backends: Nodes and their Leases, and Pod status on scheduled nodes."""
