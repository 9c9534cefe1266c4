#!/usr/bin/env bash
# Builds the pinned Helm (a peer that bench/vs_helm.py measures kplan against) into the cache outside the
# repository that holds the control plane, keyed by version. Does nothing when it is already there.
#   KPLAN_HELM_DIR   where the binary goes (default ~/.cache/kplan/helm-v4.3.1)
set -euo pipefail
cd "$(dirname "$0")"

HELM=v4.3.1
OUT=${KPLAN_HELM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kplan/helm-$HELM}
if [ -x "$OUT/helm" ]; then
  echo "helm $HELM: already built in $OUT"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "helm: Go >= 1.26 must be on PATH to build it" >&2
  exit 1
fi
echo "helm $HELM: building into $OUT (a cold build downloads ~300 MB of modules and compiles for some minutes)"
mkdir -p "$OUT.partial"
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM"
CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "$ldflags" -o "$OUT.partial/helm" helm.sh/helm/v4/cmd/helm
mkdir -p "$OUT"
mv "$OUT.partial/helm" "$OUT/helm"
rmdir "$OUT.partial" 2>/dev/null || true
echo "helm $HELM: ready in $OUT"
