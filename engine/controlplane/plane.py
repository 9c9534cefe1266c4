"""ControlPlane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler on free 127.0.0.1 ports.

    with ControlPlane() as plane:
        plane.url                                   # https://127.0.0.1:<port>
        plane.kubeconfig(context="kplan-dev")       # an admin kubeconfig (system:masters), certificates inline
        plane.user("alice", ("devs",))              # a client certificate for another user
        plane.components["kube-apiserver"].stop()   # fault tests may stop, kill or pause a component

Everything lives in a temporary folder removed on stop; the flags follow envtest and kwokctl's binary runtime
(REALCLUSTER.md), with ServiceAccount admission and the controller manager on, so it behaves as a real cluster
whose only missing parts are the kubelets and volume provisioners.
"""

from __future__ import annotations

import base64
import shutil
import ssl
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from engine.controlplane import binaries, pki
from engine.controlplane.processes import Component, free_port

__all__ = ["ControlPlane"]

SERVICE_RANGE = "10.96.0.0/16"  # as the dev backend allocates
START_TIMEOUT = 120.0  # seconds each component may take to become ready (2 cores, cold page cache)
ADMIN = ("kplan-admin", ("system:masters",))
KUBELET_CLIENT = ("kube-apiserver-kubelet-client", ("system:masters",))  # how kubeadm names the API server's
# client of the kubelets; the kubelets check it against the CA (the simulated kubelet's API, for pods/log)
QPS = ("--kube-api-qps=200", "--kube-api-burst=400")  # the controllers must not be what a benchmark measures


# The controllers an API server needs for its own semantics (what the dev backend's API server does itself):
# garbage collection, namespace deletion, the default ServiceAccount and root CA of each namespace, and the
# usage of ResourceQuotas (their admission refuses nothing until the controller has filled their status).
API_CONTROLLERS = ("garbage-collector-controller", "namespace-controller", "serviceaccount-controller",
                   "root-ca-certificate-publisher-controller", "resourcequota-controller")


class ControlPlane:
    """`workloads=False`: only API_CONTROLLERS and no scheduler, for tests of the API server itself."""

    def __init__(self, *, port: int = 0, folder: Path | None = None, workloads: bool = True) -> None:
        self.binaries = binaries.locate()
        self.workloads = workloads
        self.port = port
        self.url = ""
        self.components: dict[str, Component] = {}
        self._given_folder = folder
        self.folder = Path()
        self._owns_folder = False

    # lifecycle

    def start(self) -> ControlPlane:
        if self._given_folder is None:
            self.folder, self._owns_folder = Path(tempfile.mkdtemp(prefix="kplan-real-")), True
        else:
            self.folder = self._given_folder
            self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._start_all()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_all(self) -> None:
        self.ca = pki.Authority(self.folder)
        self.serving = self.ca.issue("apiserver", "kube-apiserver", server=True)
        self.signer = pki.signing_key(self.folder)
        self.admin = self.ca.issue("admin", *ADMIN)
        self.kubelet_client = self.ca.issue("apiserver-kubelet-client", *KUBELET_CLIENT)
        self.port = self.port or free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        etcd = self._start_etcd()
        self._start_apiserver(etcd)
        self._start_controller_manager()
        if self.workloads:
            self._start_scheduler()

    def stop(self) -> None:
        for name in ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"):
            component = self.components.pop(name, None)
            if component is not None:
                component.stop()
        if self._owns_folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self._owns_folder = False

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    # components

    def _run(self, name: str, *args: str) -> Component:
        component = Component(name, [str(self.binaries[name]), *args], self.folder / f"{name}.log")
        self.components[name] = component
        return component

    def _start_etcd(self) -> str:
        client = f"http://127.0.0.1:{free_port()}"
        etcd = self._run(
            "etcd", f"--data-dir={self.folder / 'etcd'}", f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}", f"--listen-peer-urls=http://127.0.0.1:{free_port()}",
            "--unsafe-no-fsync=true", "--log-level=warn", "--quota-backend-bytes=8589934592",
        )
        etcd.wait_until(lambda: self._http_ok(f"{client}/health"), START_TIMEOUT, "healthy")
        return client

    def _start_apiserver(self, etcd: str) -> None:
        self.start_apiserver_with(etcd)

    def start_apiserver_with(self, etcd: str) -> None:
        """Start (or, after it was stopped, restart) kube-apiserver on the same port, etcd and keys."""
        self._etcd = etcd
        api = self._run(
            "kube-apiserver", f"--etcd-servers={etcd}", f"--cert-dir={self.folder}",
            f"--tls-cert-file={self.serving.cert}", f"--tls-private-key-file={self.serving.key}",
            f"--secure-port={self.port}", "--bind-address=127.0.0.1", f"--service-cluster-ip-range={SERVICE_RANGE}",
            "--allow-privileged=true", "--authorization-mode=RBAC", f"--client-ca-file={self.ca.cert}",
            f"--service-account-issuer=https://127.0.0.1:{self.port}/",
            f"--service-account-key-file={self.signer.cert}", f"--service-account-signing-key-file={self.signer.key}",
            "--endpoint-reconciler-type=none", "--enable-priority-and-fairness=false", "--v=1",
            f"--kubelet-client-certificate={self.kubelet_client.cert}",
            f"--kubelet-client-key={self.kubelet_client.key}", f"--kubelet-certificate-authority={self.ca.cert}",
            "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
        )
        api.wait_until(lambda: self._http_ok(f"{self.url}/readyz"), START_TIMEOUT, "ready")

    def restart_apiserver(self) -> None:
        """Kill kube-apiserver and start it again (fault tests)."""
        self.components.pop("kube-apiserver").stop()
        self.start_apiserver_with(self._etcd)

    def _start_controller_manager(self) -> None:
        config = self.kubeconfig_file("kcm", "system:kube-controller-manager")
        self._run(
            "kube-controller-manager", f"--kubeconfig={config}", "--bind-address=127.0.0.1", "--secure-port=0",
            "--leader-elect=false", f"--controllers={'*' if self.workloads else ','.join(API_CONTROLLERS)}",
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={self.signer.key}", f"--root-ca-file={self.ca.cert}",
            f"--service-cluster-ip-range={SERVICE_RANGE}", *QPS, "--v=1",
        ).wait_until(lambda: self._exists("/api/v1/namespaces/default/serviceaccounts/default"), START_TIMEOUT,
                     "ready (the default ServiceAccount of namespace default)")

    def _start_scheduler(self) -> None:
        kubeconfig = self.kubeconfig_file("scheduler", "system:kube-scheduler")
        config = self.folder / "scheduler.yaml"
        config.write_text(yaml.safe_dump({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 200, "burst": 400},
            "leaderElection": {"leaderElect": False},
        }))
        self._run("kube-scheduler", f"--config={config}", "--bind-address=127.0.0.1", "--secure-port=0", "--v=1")

    # clients

    def user(self, name: str, groups: tuple[str, ...] = ()) -> pki.Credential:
        """A client certificate for `name` in `groups` (RBAC decides what it may do)."""
        stem = "user-" + "".join(c if c.isalnum() else "-" for c in name)
        return self.ca.issue(stem, name, groups)

    def kubeconfig(self, context: str = "kplan-dev", credential: pki.Credential | None = None) -> dict[str, Any]:
        """A kubeconfig document for `credential` (default: the admin), certificates inline."""
        credential = credential or self.admin
        inline = {"client-certificate-data": encode(credential.cert), "client-key-data": encode(credential.key)}
        return {
            "apiVersion": "v1", "kind": "Config", "preferences": {}, "current-context": context,
            "clusters": [{"name": context, "cluster": {"server": self.url,
                                                       "certificate-authority-data": encode(self.ca.cert)}}],
            "users": [{"name": context, "user": inline}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context, "namespace": "default"}}],
        }

    def kubeconfig_file(self, stem: str, user: str, groups: tuple[str, ...] = ()) -> Path:
        path = self.folder / f"{stem}.kubeconfig"
        path.write_text(yaml.safe_dump(self.kubeconfig(stem, self.ca.issue(stem, user, groups))))
        return path

    def ssl_context(self, credential: pki.Credential | None = None) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca.cert))
        credential = credential or self.admin
        context.load_cert_chain(str(credential.cert), str(credential.key))
        return context

    def _http_ok(self, url: str) -> bool:
        return self._get(url) == 200

    def _exists(self, path: str) -> bool:
        return self._get(self.url + path) == 200

    def _get(self, url: str) -> int:
        context = self.ssl_context() if url.startswith("https:") else None
        try:
            with urllib.request.urlopen(url, timeout=5, context=context) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as err:
            return int(err.code)
        except (OSError, ValueError):
            return 0


def encode(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()
