"""engine.kube.sdk: the client's modules without the `kubernetes` package's __init__, which still runs, whole,
the first time anything asks the package for what it lacks."""

from __future__ import annotations

import subprocess
import sys

EAGER = ("kubernetes.dynamic", "kubernetes.stream", "kubernetes.leaderelection", "kubernetes.informer",
         "kubernetes.watch", "kubernetes.utils.create_from_yaml", "oauthlib.oauth2", "requests_oauthlib", "requests")


def python(code: str) -> list[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def test_the_client_loads_without_the_subpackages_it_does_not_use() -> None:
    loaded = python(f"import sys; import engine.kube.sdk; print(*[m in sys.modules for m in {EAGER!r}])")
    assert loaded == ["False"] * len(EAGER)


def test_the_package_is_whole_once_asked_for_what_it_lacks() -> None:
    code = ("import engine.kube.sdk as sdk, kubernetes; from kubernetes import dynamic, client, config; "
            "print(kubernetes.__version__ == client.__version__, dynamic.DynamicClient.__name__, "
            "sdk.ApiClient is client.ApiClient, sdk.kube_config is config, hasattr(kubernetes, 'nothing'))")
    assert python(code) == ["True", "DynamicClient", "True", "True", "False"]


def test_a_kubernetes_imported_before_is_left_as_it_is() -> None:
    code = ("import kubernetes; before = dict(vars(kubernetes)); import engine.kube.sdk, sys; "
            "print(sys.modules['kubernetes'] is kubernetes, 'dynamic' in before)")
    assert python(code) == ["True", "True"]


def test_the_kubeconfig_loader_gets_the_real_oauth2_session_at_its_first_call() -> None:
    code = ("import engine.kube.sdk, sys; loader = sys.modules['kubernetes.config.kube_config']; "
            "session = loader.OAuth2Session(client_id='kplan', token={'access_token': 'x'}); "
            "import requests_oauthlib; "
            "print(type(session) is requests_oauthlib.OAuth2Session, session.client_id, "
            "loader.oauthlib.oauth2.rfc6749.errors.InvalidClientIdError.__name__, "
            "sys.modules['oauthlib.oauth2'] is loader.oauthlib.oauth2)")
    assert python(code) == ["True", "kplan", "InvalidClientIdError", "True"]


def test_oauth2_modules_imported_before_are_the_ones_the_loader_uses() -> None:
    code = ("import requests_oauthlib, oauthlib.oauth2; import engine.kube.sdk, sys; "
            "loader = sys.modules['kubernetes.config.kube_config']; "
            "print(loader.OAuth2Session is requests_oauthlib.OAuth2Session, 'kubernetes.dynamic' in sys.modules)")
    assert python(code) == ["True", "False"]


def test_the_utils_package_is_whole_once_asked_for_what_it_lacks() -> None:
    code = ("import engine.kube.sdk; from kubernetes.utils import parse_quantity, create_from_dict; "
            "print(parse_quantity('1Ki'))")
    assert python(code) == ["1024"]


class Chunks:
    """What a streaming urllib3 response yields from stream(): the bytes as they arrived, cut anywhere."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    def stream(self, amt: int | None = None, decode_content: bool = False) -> list[bytes]:
        return list(self.chunks)


def test_watch_lines_are_joined_across_chunks_and_split_within_one() -> None:
    from engine.kube.transport import response_lines

    answer = Chunks(b'{"type": "ADDED"', b'}\n{"type": "MODIFIED"}\n\n{"ty', b'pe": "DE\xff"}\n{"cut": ')
    assert list(response_lines(answer)) == ['{"type": "ADDED"}', '{"type": "MODIFIED"}', "",
                                            '{"type": "DE\ufffd"}']
