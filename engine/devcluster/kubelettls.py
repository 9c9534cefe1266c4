"""The TLS of the simulated kubelet's API: its serving certificate and the API server's client certificate, both
from the cluster's CA (the real control plane's, or a throwaway one of the dev cluster's)."""

from __future__ import annotations

import shutil
import ssl
import tempfile
from pathlib import Path

from engine.controlplane import pki

__all__ = ["client_context", "kubelet_context", "throwaway"]

KUBELET = "kplan-kubelet"
API_CLIENT = ("kube-apiserver-kubelet-client", ("system:masters",))


def kubelet_context(ca: pki.Authority) -> ssl.SSLContext:
    """The kubelet's side: a serving certificate for 127.0.0.1, and clients checked against `ca`."""
    serving = ca.issue("kubelet", KUBELET, server=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(ca.cert))
    context.load_cert_chain(str(serving.cert), str(serving.key))
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def client_context(ca_cert: Path, client: pki.Credential) -> ssl.SSLContext:
    """The API server's side: the kubelet's certificate checked against the CA, its own presented."""
    context = ssl.create_default_context(cafile=str(ca_cert))
    context.load_cert_chain(str(client.cert), str(client.key))
    return context


def throwaway() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(API server client, kubelet server) contexts from a CA made for this cluster; its files are gone once the
    contexts hold them."""
    folder = Path(tempfile.mkdtemp(prefix="kplan-dev-ca-"))
    try:
        ca = pki.Authority(folder)
        client = client_context(ca.cert, ca.issue("apiserver-kubelet-client", *API_CLIENT))
        return client, kubelet_context(ca)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
