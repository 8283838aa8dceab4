#!/bin/sh
# Run inside both stand-in builds (ubuntu.Dockerfile, python.Dockerfile): the
# one place that says what a stand-in's Debian archive is and how it is left.
#
#   sh setup-archive.sh [PACKAGE...]    # PACKAGEs are installed from the archive
#
# - sources: bookworm plus its updates and security suites, as Debian's own
#   image has (the base image carries bookworm main only).
# - the site's CAs (COPY'd to /usr/local/share/ca-certificates first) into the
#   system store: the egress proxy re-signs TLS with them.
# - PEP 668: neither ubuntu:22.04 (no marker) nor python:3.x-slim (a python
#   that is not the distribution's) refuses `pip install X` outside a venv;
#   Debian's marker would. It is diverted, not removed, so a task's upgrade of
#   libpython3.11-stdlib does not put it back (installing python3-venv here
#   already does that upgrade from bookworm-security), and /etc/pip.conf tells
#   pip too, for any marker a later package brings.
# - /usr/share/autolab-standin/packages: every name the archive offers, so a
#   preflight says without a build which package a task needs that this
#   archive lacks (Ubuntu's linux-tools-generic).
# - apt lists and caches removed, like a real image: task Dockerfiles run
#   `apt-get update` themselves (apt-get clean drops the 80 MB of pkgcache.bin
#   that update leaves).
set -eu

printf '%s\n' \
  'deb http://deb.debian.org/debian bookworm main' \
  'deb http://deb.debian.org/debian bookworm-updates main' \
  'deb http://deb.debian.org/debian-security bookworm-security main' \
  > /etc/apt/sources.list
update-ca-certificates >/dev/null
for marker in /usr/lib/python3*/EXTERNALLY-MANAGED; do
  dpkg-divert --local --rename --divert "$marker.standin" --add "$marker"
done
printf '[global]\nbreak-system-packages = true\n' > /etc/pip.conf

apt-get update -qq
if [ $# -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
fi
mkdir -p /usr/share/autolab-standin
apt-cache pkgnames | LC_ALL=C sort -u > /usr/share/autolab-standin/packages
grep -qx python3 /usr/share/autolab-standin/packages
apt-get clean
rm -rf /var/lib/apt/lists/*
