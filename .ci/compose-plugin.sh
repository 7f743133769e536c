#!/usr/bin/env bash
# Install Docker Compose v2 as a docker CLI plugin, built from source fetched through the Go module proxy
# (Debian bookworm has no compose v2 package; its docker-compose is v1, a different program).
#
#   compose-plugin.sh            build (or reuse) the pinned version and install ~/.docker/cli-plugins/docker-compose
#   compose-plugin.sh --print    print the path of the cached binary after making sure it is built
#
# `go install github.com/docker/compose/v2/cmd@vX` refuses: compose's go.mod has exclude/replace directives,
# which `go install pkg@version` does not allow. So: `go mod download` the module, copy it (the module cache is
# read-only), and `go build ./cmd` inside the copy. The binary is cached per version; a second run only copies it.
# Settings: TURNBENCH_COMPOSE_VERSION (default below), TURNBENCH_COMPOSE_CACHE (~/.cache/turnbench/compose),
# DOCKER_CONFIG (the CLI plugin directory is $DOCKER_CONFIG/cli-plugins, default ~/.docker/cli-plugins).
set -euo pipefail

VERSION=${TURNBENCH_COMPOSE_VERSION:-v2.40.3}
MODULE=github.com/docker/compose/v2
CACHE=${TURNBENCH_COMPOSE_CACHE:-$HOME/.cache/turnbench/compose}
BIN=$CACHE/$VERSION/docker-compose
PLUGIN_DIR=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins

T0=$(date +%s.%N); t_step=$T0
say() { local t; t=$(date +%s.%N)
  awk -v a="$T0" -v b="$t_step" -v t="$t" -v m="$*" 'BEGIN { printf "[compose %6.1fs +%5.1fs] %s\n", t - a, t - b, m }' >&2
  t_step=$t; }

built_ok() { [ -x "$BIN" ] && [ "$("$BIN" version --short 2>/dev/null)" = "${VERSION#v}" ]; }

if built_ok; then
  say "cached: $BIN ($VERSION)"
else
  # the official Go tarball's place, where a machine has it but PATH does not
  command -v go >/dev/null || [ ! -x /usr/local/go/bin/go ] || PATH=/usr/local/go/bin:$PATH
  command -v go >/dev/null || { echo "compose-plugin.sh: go not found (a Go toolchain >= the one compose's go.mod asks for)" >&2; exit 1; }
  # Private module and build caches (about 1.4 GB), so they can be removed as one with the binary cache.
  # GOTOOLCHAIN=local: never download another Go toolchain; GOFLAGS=-mod=mod: resolve from go.mod/go.sum,
  # not a vendor directory, and let go fill go.sum in the copy if needed.
  export GOMODCACHE=$CACHE/gomod GOCACHE=$CACHE/gobuild GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" \
         CGO_ENABLED=0
  mkdir -p "$GOMODCACHE" "$GOCACHE" "$(dirname "$BIN")"
  dir=$(cd "$CACHE" && go mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "compose-plugin.sh: go mod download $MODULE@$VERSION gave no directory" >&2; exit 1; }
  say "module $MODULE@$VERSION downloaded to $dir"
  work=$(mktemp -d "${TMPDIR:-/tmp}/turnbench-compose.XXXXXX")
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  cp -r "$dir" "$work/src"
  chmod -R u+w "$work/src"
  say "go build ./cmd (go $(go env GOVERSION); 2 cores: several minutes cold) ..."
  # internal.Version is what `docker compose version` prints (the Makefile sets it the same way).
  (cd "$work/src" && nice -n 10 go build -trimpath -ldflags "-s -w -X $MODULE/internal.Version=$VERSION" \
      -o "$BIN.part" ./cmd)
  mv "$BIN.part" "$BIN"
  built_ok || { echo "compose-plugin.sh: built binary does not report $VERSION: $("$BIN" version 2>&1 | head -n1)" >&2; exit 1; }
  say "built $BIN ($(du -h "$BIN" | cut -f1))"
fi

if [ "${1:-}" = --print ]; then echo "$BIN"; exit 0; fi
mkdir -p "$PLUGIN_DIR"
install -m 0755 "$BIN" "$PLUGIN_DIR/docker-compose"
say "installed $PLUGIN_DIR/docker-compose: $(docker compose version 2>/dev/null || "$PLUGIN_DIR/docker-compose" version)"
