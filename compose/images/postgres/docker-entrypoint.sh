#!/usr/bin/env bash
# Entrypoint of turnbench-local/postgres: the part of the official image's contract that
# turnbench and testcontainers rely on.
#   POSTGRES_USER (default postgres), POSTGRES_PASSWORD (required unless POSTGRES_HOST_AUTH_METHOD=trust),
#   POSTGRES_DB (default: the user), POSTGRES_INITDB_ARGS (appended to ours), POSTGRES_HOST_AUTH_METHOD
#   (default scram-sha-256), /docker-entrypoint-initdb.d/*.sql|*.sh run once on first start.
# First start: initdb with the password from a file (never on a command line), scram for TCP, create the
# database on a socket-only temporary server, then exec postgres as PID 1, listening on all interfaces,
# as the non-root user postgres.
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi
shift

: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA
SOCKETS=/var/run/postgresql

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" "$SOCKETS"
  chown postgres:postgres "$PGDATA" "$SOCKETS"
  chmod 700 "$PGDATA"
  chmod 2775 "$SOCKETS"
  # setpriv (util-linux, in every Debian) instead of gosu: nothing to download.
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" postgres "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
    echo "docker-entrypoint: POSTGRES_PASSWORD is not set (or set POSTGRES_HOST_AUTH_METHOD=trust)" >&2
    exit 1
  fi
  pwfile=$(mktemp)
  trap 'rm -f "$pwfile"' EXIT
  printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$pwfile"
  # UTF8 with the C locale, as turnbench's embedded provider: byte-order collation, identical on every host
  # (the official image uses en_US.utf8). --no-sync: the stack is throwaway, and initdb's final fsync of the
  # whole tree was most of a cold start here (4 s of 6). Flags in POSTGRES_INITDB_ARGS come later and so win.
  # shellcheck disable=SC2086
  initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C --no-sync \
    ${POSTGRES_INITDB_ARGS:-} >/dev/null
  rm -f "$pwfile"
  printf '\n# docker-entrypoint: any address, as the official image\nhost all all all %s\n' "$auth" >> "$PGDATA/pg_hba.conf"
  # The sockets in both places psql may look by default (Debian's build: /var/run/postgresql; upstream: /tmp).
  printf "\nlisten_addresses = '*'\nunix_socket_directories = '%s, /tmp'\n" "$SOCKETS" >> "$PGDATA/postgresql.conf"

  # A temporary server on the socket only: nobody outside can connect (or see it ready) before setup is done.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=$SOCKETS" -w -s start
  psql=(psql -X -q -v ON_ERROR_STOP=1 --host "$SOCKETS" --username "$user" --no-password)
  if [ "$db" != postgres ]; then
    "${psql[@]}" --dbname postgres --set db="$db" <<'SQL'
CREATE DATABASE :"db";
SQL
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "docker-entrypoint: running $f"; . "$f" ;;
      *.sql) echo "docker-entrypoint: running $f"; "${psql[@]}" --dbname "$db" -f "$f" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w -s stop
  echo "docker-entrypoint: initialised $PGDATA (user $user, database $db, host auth $auth)"
fi

exec postgres -D "$PGDATA" "$@"
