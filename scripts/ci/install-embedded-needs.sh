#!/usr/bin/env bash
# .ci/run's install stage: what the embedded stack and `make test` need on a fresh CI machine of this kind (Debian,
# root), each installed only where it is missing. `make bench` itself needs none of it (the zero-install stage,
# scripts/ci/zero-install.sh, proves that); CI installs them so `make test` also covers the system binaries.
#
# usage: scripts/ci/install-embedded-needs.sh      (as root; .ci/run runs it as `stage install`)
set -euo pipefail

# PostgreSQL server binaries (initdb, postgres) when none are found; the package must not create or start a
# cluster of its own, the tests start private servers on free ports.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  mkdir -p /etc/postgresql-common/createcluster.d
  echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/turnbench.conf
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 \
    || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql
fi
# A JDK (17+) and Maven are on this machine kind; install them only where they are not. The embedded stack no
# longer needs any of these (the zero-install stage, scripts/ci/zero-install.sh, proves it); `make test` runs on
# them, so CI covers the system binaries as well as the fetched ones, and Maven rewrites jars.lock.json when
# pom.xml moves.
if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless maven
fi
# Debian's Chromium, for the test that renders report.html in a real headless browser.
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
fi
