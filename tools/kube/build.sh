#!/usr/bin/env bash
# Builds the pinned control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) into
# a cache outside the repository, keyed by version. Does nothing when all four are already there.
#   KPLAN_KUBE_DIR   where the binaries go (default ~/.cache/kplan/kube-v1.37.2)
set -euo pipefail
cd "$(dirname "$0")"

K8S=v1.37.2
MAJOR=1 MINOR=37
OUT=${KPLAN_KUBE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kplan/kube-$K8S}
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler)

missing=()
for b in "${BINARIES[@]}"; do [ -x "$OUT/$b" ] || missing+=("$b"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "control plane $K8S: already built in $OUT"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "control plane: Go >= 1.26 must be on PATH to build ${missing[*]} (see README, 'The real backend')" >&2
  exit 1
fi

echo "control plane $K8S: building ${missing[*]} into $OUT"
echo "  a cold build downloads ~1 GB of modules and compiles for 15-30 minutes on 2 cores;"
echo "  later builds reuse Go's module and build caches ($(go env GOMODCACHE), $(go env GOCACHE))"
mkdir -p "$OUT.partial"
go mod download -x 2>&1 | grep -c '^# get' | sed 's/^/  modules fetched: /' || true

date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$K8S -X $pkg.gitMajor=$MAJOR -X $pkg.gitMinor=$MINOR"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
done

declare -A pkgs=(
  [etcd]=go.etcd.io/etcd/server/v3
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
)
n=0
for b in "${missing[@]}"; do
  n=$((n + 1))
  start=$SECONDS
  echo "  [$n/${#missing[@]}] $b ..."
  CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "$ldflags" -o "$OUT.partial/$b" "${pkgs[$b]}"
  echo "  [$n/${#missing[@]}] $b built in $((SECONDS - start)) s"
done
mkdir -p "$OUT"
for b in "${missing[@]}"; do mv "$OUT.partial/$b" "$OUT/$b"; done
rmdir "$OUT.partial" 2>/dev/null || true
echo "control plane $K8S: ready in $OUT"
