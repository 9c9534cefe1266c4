#!/usr/bin/env bash
# Builds the pinned token server of the CNCF Distribution registry (contrib/token-server, the one Distribution's
# own integration tests use) into the cache outside the repository that holds the control plane, keyed by
# version. The OCI tests put it in front of Debian's docker-registry for bearer-token authentication. Does nothing
# when it is already there.
#   KPLAN_TOKEN_SERVER_DIR   where the binary goes (default ~/.cache/kplan/token-server-v2.8.3)
set -euo pipefail
cd "$(dirname "$0")"

VERSION=v2.8.3
OUT=${KPLAN_TOKEN_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kplan/token-server-$VERSION}
if [ -x "$OUT/token-server" ]; then
  echo "token server $VERSION: already built in $OUT"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "token server: Go >= 1.26 must be on PATH to build it (see README, 'The real backend')" >&2
  exit 1
fi
echo "token server $VERSION: building into $OUT (a cold build downloads ~30 MB of modules and compiles for 1-2 minutes on 2 cores)"
start=$SECONDS
mkdir -p "$OUT.partial"
CGO_ENABLED=0 go build -p 2 -trimpath -ldflags "-s -w" -o "$OUT.partial/token-server" \
  github.com/docker/distribution/contrib/token-server
mkdir -p "$OUT"
mv "$OUT.partial/token-server" "$OUT/token-server"
rmdir "$OUT.partial" 2>/dev/null || true
echo "token server $VERSION: ready in $OUT after $((SECONDS - start)) s"
