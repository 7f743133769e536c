#!/usr/bin/env bash
# Make a Debian bookworm minbase root filesystem tarball from the host's own Debian mirror (no registry needed).
#
#   rootfs.sh OUT.tar MIRROR SECURITY_MIRROR
#
# The tarball is what `docker import` turns into turnbench-local/debian:bookworm. It is made once and cached by
# build.sh under a key over this script and its inputs: debootstrap is the slow part (about a minute).
set -euo pipefail
out=$1 mirror=$2 security=$3
suite=bookworm

work=$(mktemp -d "${TMPDIR:-/tmp}/turnbench-rootfs.XXXXXX")
root=$work/rootfs
trap 'umount -l "$root/proc" 2>/dev/null || true; rm -rf "$work"' EXIT

# minbase: essential + apt only. ca-certificates is not in it; images that need TLS add it themselves.
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

# Sources inside the image: the same mirror the host uses, plus updates and security, so images get fixes.
rm -f "$root/etc/apt/sources.list"
cat > "$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF

# Package maintainer scripts must never try to start services inside an image build.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"; chmod 755 "$root/usr/sbin/policy-rc.d"

# Smaller, faster image builds: no recommends, no translations, no docs/man/locales (as Debian's -slim images).
cat > "$root/etc/apt/apt.conf.d/90turnbench" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Acquire::GzipIndexes "true";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
EOF
cat > "$root/etc/dpkg/dpkg.cfg.d/90turnbench-excludes" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
# openjdk's postinst registers man pages with update-alternatives and fails when man1 is missing.
mkdir -p "$root/usr/share/man/man1"

# Bring the point release up to date (security fixes) once here rather than in every image.
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
chroot "$root" /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get -y -qq upgrade && apt-get clean' \
  >"$work/upgrade.log" 2>&1 || { tail -n 30 "$work/upgrade.log" >&2; exit 1; }
umount "$root/proc"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/* "$root"/tmp/* "$root"/root/.cache
: > "$root/etc/resolv.conf"   # docker provides its own at run time
rm -f "$root/etc/hostname"

# Sorted names and numeric owners: the tarball does not depend on directory order or the host's user names.
tar --sort=name --numeric-owner --xattrs -C "$root" -cf "$out.part" .
mv "$out.part" "$out"
