"""The engine run as a manager: watch-driven work queue, reconcile, leader election, metrics."""
