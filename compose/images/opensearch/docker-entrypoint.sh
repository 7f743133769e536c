#!/usr/bin/env bash
# Entrypoint of turnbench-local/opensearch, following the official image: environment variables named like
# settings (at least two dot-separated lowercase words, e.g. discovery.type=single-node, or `processors`) become
# -E options of bin/opensearch. OPENSEARCH_JAVA_OPTS is read by bin/opensearch itself. Variables of the
# official image's security setup (DISABLE_SECURITY_PLUGIN, DISABLE_INSTALL_DEMO_CONFIG,
# OPENSEARCH_INITIAL_ADMIN_PASSWORD) are accepted and ignored: this image has no security plugin.
set -euo pipefail

if [ "${1:0:1}" = '-' ]; then set -- opensearch "$@"; fi
if [ "$1" != opensearch ]; then exec "$@"; fi
shift

opts=()
# env -0: values may hold newlines; names with dots are not shell variables, so read them from env.
while IFS= read -r -d '' entry; do
  key=${entry%%=*} value=${entry#*=}
  if [[ "$key" =~ ^[a-z0-9_]+\.[a-z0-9_]+ || "$key" == processors ]] && [ -n "$value" ]; then
    opts+=("-E$key=$value")
  fi
done < <(env -0)

exec /usr/share/opensearch/bin/opensearch "${opts[@]}" "$@"
