#!/usr/bin/env bash
# Build turnbench's local images with no container registry: a Debian base from the host's apt mirror, then
# PostgreSQL and OpenSearch on it. Legacy builder, `--network host` (apt/pip inside reach what the host reaches).
#
#   compose/images/build.sh [base|postgres|opensearch|all]...        (`make images`; DOCKER_HOST names the engine)
#
# Local builds never carry an official image's name: turnbench-local/<name>:<version> (turnbench/stack/pins.py
# holds the same names; a unit test keeps them equal). Layers are reused: a second build changes nothing.
# Needs: a Docker engine, debootstrap (once, for the base), curl, unzip, sha256sum.
# Settings: TURNBENCH_DEBIAN_MIRROR / TURNBENCH_DEBIAN_SECURITY_MIRROR (default: the host's apt sources),
# TURNBENCH_MAVEN_URL (a Maven Central mirror), TURNBENCH_JARS_DIR (`make jars`'s cache, reused when present),
# TURNBENCH_IMAGE_PREFIX (default turnbench-local; the benchmark builds cold under another prefix),
# TURNBENCH_BUILD_NO_CACHE=1 (rebuild every layer).
# Caches (reusable, safe to delete): $TURNBENCH_IMAGE_CACHE (default ~/.cache/turnbench/images)
#   rootfs/debian-bookworm-<key>.tar     the debootstrapped base, keyed by rootfs.sh + mirrors (TURNBENCH_REFRESH_BASE=1 remakes it)
#   downloads/                           Maven Central zips (sha256 pins below), module jars (sha1 checked against Maven Central)
#   context/<image>/                     staged build contexts
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${TURNBENCH_IMAGE_CACHE:-$HOME/.cache/turnbench/images}
JARS=${TURNBENCH_JARS_DIR:-$HOME/.cache/turnbench/opensearch-2.19.6/lib}   # `make jars` in turnbench fills this
DOCKER=${DOCKER:-docker}
PREFIX=${TURNBENCH_IMAGE_PREFIX:-turnbench-local}
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(all)
for t in "${targets[@]}"; do
  case $t in base|postgres|opensearch|all) ;; *) echo "build.sh: unknown target ${t:0:40} (base|postgres|opensearch|all)" >&2; exit 2 ;; esac
done
[[ $PREFIX =~ ^[a-z0-9]+([._-][a-z0-9]+)*$ ]] || { echo "build.sh: TURNBENCH_IMAGE_PREFIX must be one lowercase name component" >&2; exit 2; }
"$DOCKER" version -f '{{.Server.Version}}' >/dev/null 2>&1 || {
  echo "build.sh: no Docker engine answers (DOCKER_HOST=${DOCKER_HOST:-unset}); start one first" >&2; exit 2; }

# ---- pins ---------------------------------------------------------------------------------------------------
BASE_IMAGE=$PREFIX/debian:bookworm
OPENSEARCH_VERSION=2.19.6
LUCENE_VERSION=9.12.3
PLUGIN_VERSION=2.19.6.0
POSTGRES_MAJOR=15
MAVEN=${TURNBENCH_MAVEN_URL:-https://repo1.maven.org/maven2}
# artifact file name | path under the Maven repository | sha256 (checked on every use, not only on download)
ARTIFACTS=(
  "opensearch-2.19.6.zip|org/opensearch/distribution/integ-test-zip/opensearch/2.19.6|71d6d8b1c637f3faecda0752b184b1cc526fc6eaad59ec1408c6327bb00b9293"
  "opensearch-knn-2.19.6.0.zip|org/opensearch/plugin/opensearch-knn/2.19.6.0|c21b9565624d29fd4024e3a3902712349006cb7894a73c45d976756a761e628f"
  "neural-search-2.19.6.0.zip|org/opensearch/plugin/neural-search/2.19.6.0|b38b136b280a219d7f4495dd5d7e11e92a528b874fe940fc8502b8a5c599c820"
)

T0=$(date +%s.%N); t_step=$T0
say() { local t; t=$(date +%s.%N)
  awk -v a="$T0" -v b="$t_step" -v t="$t" -v m="$*" 'BEGIN { printf "[build %6.1fs +%5.1fs] %s\n", t - a, t - b, m }'
  t_step=$t; }
dc() { "$DOCKER" "$@"; }
image_label() { dc image inspect -f "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true; }

# The Debian mirrors the host's apt uses (deb822 or one-line sources); the base image uses the same ones.
host_mirror() { # $1: debian | debian-security
  local re="^https?://[^ ]*/$1/?\$"
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{for (i = 2; i <= NF; i++) print $i}'
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed 's/\[[^]]*\]//' | awk '{print $2}'
  } | grep -E "$re" | head -n 1 | sed 's#/$##' || true   # no match is handled by the caller
}

build_base() {
  local mirror security key tar
  mirror=${TURNBENCH_DEBIAN_MIRROR:-$(host_mirror debian)}
  security=${TURNBENCH_DEBIAN_SECURITY_MIRROR:-$(host_mirror debian-security)}
  [ -n "$mirror" ] || { echo "build.sh: no Debian mirror in /etc/apt/sources.list*; set TURNBENCH_DEBIAN_MIRROR" >&2; exit 1; }
  [ -n "$security" ] || security=${mirror%/debian}/debian-security
  key=$( { cat "$here/debian/rootfs.sh"; echo "$mirror $security"; debootstrap --version; } | sha256sum | cut -c1-16)
  tar=$CACHE/rootfs/debian-bookworm-$key.tar
  if [ "${TURNBENCH_REFRESH_BASE:-0}" = 1 ]; then rm -f "$tar"; fi
  if [ -s "$tar" ] && [ "$(image_label "$BASE_IMAGE" org.turnbench.rootfs-key)" = "$key" ]; then
    say "base: $BASE_IMAGE is current (rootfs key $key)"; return 0
  fi
  if [ ! -s "$tar" ]; then
    command -v debootstrap >/dev/null || { echo "build.sh: apt-get install debootstrap" >&2; exit 1; }
    mkdir -p "$CACHE/rootfs"
    say "base: debootstrap bookworm minbase from $mirror (key $key) ..."
    nice -n 10 bash "$here/debian/rootfs.sh" "$tar" "$mirror" "$security"
    find "$CACHE/rootfs" -name 'debian-bookworm-*.tar' ! -name "$(basename "$tar")" -delete   # older keys
    say "base: rootfs $(du -h "$tar" | cut -f1)"
  fi
  dc import \
    -c 'CMD ["bash"]' \
    -c 'ENV LANG=C.UTF-8' \
    -c "LABEL org.turnbench.rootfs-key=$key org.turnbench.debian-mirror=$mirror org.opencontainers.image.title=turnbench-local-debian" \
    "$tar" "$BASE_IMAGE" >/dev/null
  say "base: imported $BASE_IMAGE ($(dc image inspect -f '{{.Id}}' "$BASE_IMAGE" | cut -c8-19))"
}

need_base() { dc image inspect "$BASE_IMAGE" >/dev/null 2>&1 || build_base; }

fetch() { # fetch NAME: into downloads/, verified against its pin; returns the path
  local line name path sum f
  for line in "${ARTIFACTS[@]}"; do
    IFS='|' read -r name path sum <<<"$line"
    [ "$name" = "$1" ] || continue
    f=$CACHE/downloads/$name
    if [ ! -s "$f" ]; then
      mkdir -p "$CACHE/downloads"
      curl -fsSL --retry 3 -o "$f.part" "$MAVEN/$path/$name"; mv "$f.part" "$f"
    fi
    echo "$sum  $f" | sha256sum -c --quiet - >&2 || { echo "build.sh: $f does not match its pin; delete it to refetch" >&2; exit 1; }
    echo "$f"; return 0
  done
  echo "build.sh: no pin for $1" >&2; exit 1
}

fetch_jar() { # fetch_jar GROUP_PATH ARTIFACT VERSION: from the `make jars` cache, else Maven Central (sha1 checked)
  local f=$CACHE/downloads/jars/$2-$3.jar
  if [ ! -s "$f" ]; then
    mkdir -p "$CACHE/downloads/jars"
    if [ -s "$JARS/$2-$3.jar" ]; then cp "$JARS/$2-$3.jar" "$f.part"
    else curl -fsSL --retry 3 -o "$f.part" "$MAVEN/$1/$2/$3/$2-$3.jar"; fi
    local want; want=$(curl -fsSL --retry 3 "$MAVEN/$1/$2/$3/$2-$3.jar.sha1" | cut -c1-40)
    [ "$(sha1sum "$f.part" | cut -c1-40)" = "$want" ] || { echo "build.sh: $2-$3.jar: sha1 mismatch with Maven Central" >&2; exit 1; }
    mv "$f.part" "$f"
  fi
  echo "$f"
}

build_image() { # build_image TAG CONTEXT DOCKERFILE [build args...]
  local tag=$1 ctx=$2 file=$3; shift 3
  local t; t=$(date +%s)
  local no_cache=(); [ "${TURNBENCH_BUILD_NO_CACHE:-0}" = 1 ] && no_cache=(--no-cache)
  # DOCKER_BUILDKIT=0: the legacy builder on purpose (buildx is not on every engine; its warning is noise here).
  # --network host: apt inside the build reaches the mirror the way the host does (the engine may have no NAT).
  # The log is shown only when the build fails.
  local log; log=$(mktemp)
  if ! DOCKER_BUILDKIT=0 nice -n 10 "$DOCKER" build --network host --force-rm "${no_cache[@]}" \
        --build-arg "BASE_IMAGE=$BASE_IMAGE" -f "$file" -t "$tag" "$@" "$ctx" >"$log" 2>&1; then
    tail -n 40 "$log" >&2; rm -f "$log"; echo "build.sh: $tag failed" >&2; exit 1
  fi
  rm -f "$log"
  say "$tag built in $(( $(date +%s) - t )) s ($(dc image inspect -f '{{.Id}}' "$tag" | cut -c8-19), $(( $(dc image inspect -f '{{.Size}}' "$tag") / 1000000 )) MB)"
}

build_postgres() {
  need_base
  local ctx=$CACHE/context/postgres
  rm -rf "$ctx"; mkdir -p "$ctx"
  cp "$here/postgres/Dockerfile" "$here/postgres/docker-entrypoint.sh" "$ctx/"
  build_image "$PREFIX/postgres:$POSTGRES_MAJOR" "$ctx" "$ctx/Dockerfile" --build-arg "POSTGRES_MAJOR=$POSTGRES_MAJOR"
}

# Modules of the distribution that turnbench needs and the integ-test zip lacks (it has only transport-netty4).
# Maven Central has no zips for them, so each is assembled as the full distribution lays it out:
# modules/<name>/ with its jars, plugin-descriptor.properties and (where the real module has one) plugin-security.policy.
# name | classname | extended plugins | jars as group-path:artifact:version (the ones not already in lib/)
MODULES=(
  "lang-painless|org.opensearch.painless.PainlessPlugin||org/opensearch/plugin:lang-painless:2.19.6 org/opensearch/plugin:opensearch-scripting-painless-spi:2.19.6 org/antlr:antlr4-runtime:4.13.1 org/ow2/asm:asm:9.7 org/ow2/asm:asm-analysis:9.7 org/ow2/asm:asm-commons:9.7 org/ow2/asm:asm-tree:9.7 org/ow2/asm:asm-util:9.7"
  "analysis-common|org.opensearch.analysis.common.CommonAnalysisPlugin|lang-painless|org/opensearch/plugin:analysis-common:2.19.6"
  "mapper-extras|org.opensearch.index.mapper.MapperExtrasPlugin||org/opensearch/plugin:mapper-extras-client:2.19.6"
  "aggs-matrix-stats|org.opensearch.search.aggregations.matrix.MatrixAggregationPlugin||org/opensearch/plugin:aggs-matrix-stats-client:2.19.6"
  "search-pipeline-common|org.opensearch.search.pipeline.common.SearchPipelineCommonModulePlugin||org/opensearch/plugin:search-pipeline-common:2.19.6"
  "reindex|org.opensearch.index.reindex.ReindexPlugin||org/opensearch/plugin:reindex-client:2.19.6 org/opensearch/client:opensearch-rest-client:2.19.6 org/opensearch:opensearch-ssl-config:2.19.6 org/apache/httpcomponents:httpclient:4.5.14 org/apache/httpcomponents:httpcore:4.4.16 org/apache/httpcomponents:httpasyncclient:4.1.5 org/apache/httpcomponents:httpcore-nio:4.4.16 commons-codec:commons-codec:1.18.0 commons-logging:commons-logging:1.2"
)

stage_opensearch() { # the build context: Dockerfile + files + the distribution unpacked + modules + plugin zips
  local ctx=$CACHE/context/opensearch line name cls ext jars j g a v dir
  rm -rf "$ctx"; mkdir -p "$ctx/plugins"
  cp -r "$here/opensearch/." "$ctx/"
  unzip -q "$(fetch opensearch-$OPENSEARCH_VERSION.zip)" -d "$ctx"
  mv "$ctx/opensearch-$OPENSEARCH_VERSION" "$ctx/opensearch"
  rm -f "$ctx"/opensearch/bin/*.bat "$ctx"/opensearch/bin/*.exe
  for line in "${MODULES[@]}"; do
    IFS='|' read -r name cls ext jars <<<"$line"
    dir=$ctx/opensearch/modules/$name; mkdir -p "$dir"
    for j in $jars; do
      IFS=: read -r g a v <<<"$j"
      cp "$(fetch_jar "${g//.//}" "$a" "$v")" "$dir/"
    done
    cat > "$dir/plugin-descriptor.properties" <<EOF
description=$name module of OpenSearch $OPENSEARCH_VERSION (assembled by turnbench from Maven Central jars)
version=$OPENSEARCH_VERSION
name=$name
classname=$cls
java.version=11
opensearch.version=$OPENSEARCH_VERSION
custom.foldername=
extended.plugins=$ext
has.native.controller=false
EOF
    if [ -f "$here/opensearch/policies/$name.policy" ]; then cp "$here/opensearch/policies/$name.policy" "$dir/plugin-security.policy"; fi
  done
  rm -rf "$ctx/policies"
  cp "$(fetch opensearch-knn-$PLUGIN_VERSION.zip)" "$(fetch neural-search-$PLUGIN_VERSION.zip)" "$ctx/plugins/"
  echo "$ctx"
}

build_opensearch() {
  need_base
  local ctx; ctx=$(stage_opensearch)
  say "opensearch: context staged in $ctx ($(du -sh "$ctx" | cut -f1))"
  build_image "$PREFIX/opensearch:$OPENSEARCH_VERSION" "$ctx" "$ctx/Dockerfile" \
    --build-arg "OPENSEARCH_VERSION=$OPENSEARCH_VERSION" --build-arg "LUCENE_VERSION=$LUCENE_VERSION" \
    --build-arg "PLUGIN_VERSION=$PLUGIN_VERSION"
}

for t in "${targets[@]}"; do
  case $t in
    base) build_base ;;
    postgres) build_postgres ;;
    opensearch) build_opensearch ;;
    all) build_base; build_postgres; build_opensearch ;;
  esac
done
say "done"
