"""`package new`: a small working package (a Deployment and a Service) with a passing test, to start from."""

from __future__ import annotations

from pathlib import Path

from engine.errors import PermanentError
from engine.package.rules.common import dns_label_problem

__all__ = ["create", "skeleton_files"]

OPERATOR = """\
apiVersion: kplan.dev/v1alpha1
name: {name}
operatorVersion: 0.1.0
appVersion: "1.27.0"
kplanVersion: ">=0.1"
description: {name}, run by kplan
maintainers:
  - name: A. Maintainer
    email: maintainer@example.org
tasks:
  - name: app
    kind: Apply
    spec:
      resources: [deployment.yaml, service.yaml]
plans:
  deploy:
    strategy: serial
    phases:
      - name: main
        strategy: serial
        steps:
          - name: app
            tasks: [app]
"""

PARAMS = """\
apiVersion: kplan.dev/v1alpha1
parameters:
  - name: replicas
    description: Number of pods
    type: integer
    default: 1
    minimum: 1
  - name: image
    description: Container image
    default: nginx:1.27
  - name: port
    description: Port the container listens on and the Service exposes
    type: integer
    default: 80
    minimum: 1
    maximum: 65535
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ Name }}
  namespace: {{ Namespace }}
spec:
  replicas: {{ Params.replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ OperatorName }}
      app.kubernetes.io/instance: {{ Name }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ OperatorName }}
        app.kubernetes.io/instance: {{ Name }}
    spec:
      containers:
        - name: app
          image: {{ Params.image | tojson }}
          ports:
            - containerPort: {{ Params.port }}
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: {{ Name }}
  namespace: {{ Namespace }}
spec:
  selector:
    app.kubernetes.io/name: {{ OperatorName }}
    app.kubernetes.io/instance: {{ Name }}
  ports:
    - port: {{ Params.port }}
      targetPort: {{ Params.port }}
"""

README = """\
# {name}

An operator package for kplan.

    kplan package verify {name}            # check it
    kplan template {name} -p replicas=2    # see the manifests it applies
    kplan test {name}                      # run its tests (tests/) on a dev cluster of their own
    kplan run {name}                       # run its deploy plan against the current cluster

`operator.yaml` holds the tasks and plans, `params.yaml` the parameters, and `templates/`
the Jinja2 manifest templates (`Params`, `Name`, `Namespace`, `OperatorName`, ...).
"""


SUITE = """\
# The nodes the tests need (`kplan test` starts a dev cluster with them).
apiVersion: kplan.dev/v1alpha1
kind: TestSuite
timeout: 30s
nodes:
  - name: node-1
"""

INSTALL_STEP = """\
# Install with the defaults.
apiVersion: kplan.dev/v1alpha1
kind: TestStep
commands:
  - install: {instance: app}
"""

INSTALL_ASSERT = """\
# The deploy plan completes: the Deployment's pod is ready and the Service exists.
apiVersion: kplan.dev/v1alpha1
kind: Instance
metadata:
  name: app
status:
  plans:
    deploy:
      status: COMPLETE
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
status:
  readyReplicas: 1
---
apiVersion: v1
kind: Service
metadata:
  name: app
"""


def skeleton_files(name: str) -> dict[str, str]:
    """The files of a new package called `name`."""
    return {
        "README.md": README.format(name=name),
        "operator.yaml": OPERATOR.format(name=name),
        "params.yaml": PARAMS,
        "templates/deployment.yaml": DEPLOYMENT,
        "templates/service.yaml": SERVICE,
        "tests/kplan-test.yaml": SUITE,
        "tests/install/00-install.yaml": INSTALL_STEP,
        "tests/install/00-assert.yaml": INSTALL_ASSERT,
    }


def create(name: str, parent: str = ".") -> Path:
    """Write a new package folder `parent/name`; it must not exist yet."""
    reason = dns_label_problem(name)
    if reason:
        raise PermanentError(f"cannot create the package: {reason}")
    folder = Path(parent) / name
    if folder.exists():
        raise PermanentError(f"cannot create the package: {folder} already exists")
    for path, text in skeleton_files(name).items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder
