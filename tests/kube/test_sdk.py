"""engine.kube.sdk: the client's modules without the `kubernetes` package's __init__, which still runs, whole,
the first time anything asks the package for what it lacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EAGER = ("kubernetes.dynamic", "kubernetes.stream", "kubernetes.leaderelection", "kubernetes.informer",
         "kubernetes.watch", "kubernetes.utils.create_from_yaml", "oauthlib.oauth2", "requests_oauthlib", "requests",
         "pydantic", "dateutil.parser", "kubernetes.client.api_response")


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


def test_the_api_client_reaches_pydantic_and_dateutil_at_their_first_use() -> None:
    code = ("import engine.kube.sdk as sdk, sys; from kubernetes.client import api_client; "
            "client = sdk.ApiClient(sdk.Configuration()); "
            "print(isinstance('text', api_client.SecretStr), 'pydantic' in sys.modules); "
            "from pydantic import SecretStr; "
            "print(client.sanitize_for_serialization({'a': SecretStr('hidden')})['a'], "
            "api_client.parse('2026-12-01T10:00:00Z').year); "
            "answer = api_client.ApiResponse(status_code=200, headers=None, data=[1], raw_data=b'[1]'); "
            "from kubernetes.client.api_response import ApiResponse; "
            "print(type(answer) is ApiResponse, answer.data, sys.modules['pydantic'].BaseModel in ApiResponse.__mro__)")
    assert python(code) == ["False", "False", "hidden", "2026", "True", "[1]", "True"]


def test_a_generated_api_answers_through_the_real_api_response(kubeconfig: Path) -> None:
    """The client's generated *Api classes deserialize through ApiClient.response_deserialize, which builds the
    (pydantic) ApiResponse: the stand-in imports the real one, and the call answers as it always did."""
    code = ("import engine.kube.sdk as sdk, sys; from kubernetes.client import CoreV1Api, V1NamespaceList; "
            "config = sdk.Configuration(); "
            f"sdk.kube_config.load_kube_config({str(kubeconfig)!r}, client_configuration=config); "
            "data, code, _ = CoreV1Api(sdk.ApiClient(config)).list_namespace_with_http_info(); "
            "print(code, isinstance(data, V1NamespaceList), 'default' in [n.metadata.name for n in data.items], "
            "'kubernetes.client.api_response' in sys.modules)")
    assert python(code) == ["200", "True", "True", "True"]


class Chunks:
    """What a streaming urllib3 response yields from stream(): the bytes as they arrived, cut anywhere."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    def stream(self, amt: int | None = None, decode_content: bool = False) -> list[bytes]:
        return list(self.chunks)


def test_watch_lines_are_joined_across_chunks_and_split_within_one() -> None:
    from engine.kube.transport import response_lines

    answer = Chunks(b'{"type": "ADDED"', b'}\n{"type": "MODIFIED"}\n\n{"ty', b'pe": "DE\xff"}\n{"cut": ')
    assert list(response_lines(answer)) == [b'{"type": "ADDED"}', b'{"type": "MODIFIED"}', b"",
                                            b'{"type": "DE\xff"}']


def test_a_watch_line_of_invalid_utf8_reads_with_replacement_characters() -> None:
    from engine.kube.codec import decode_line

    assert decode_line(b'{"type": "DE\xff"}') == {"type": "DE\ufffd"}
