"""The real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) as local processes."""
