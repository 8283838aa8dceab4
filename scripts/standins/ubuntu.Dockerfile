# Stand-in for `ubuntu:22.04`-style task images on a worker with no image
# registry: Debian bookworm under a name of our own, never Ubuntu's, so a run
# on it cannot be mistaken for one on the published environment (the labels
# say what it is). The real tasks' Dockerfiles only run `apt-get update &&
# apt-get install gcc make python3 tmux ...`, which Debian's archive honours;
# Ubuntu-only packages (linux-tools-generic) are listed as missing by
# /usr/share/autolab-standin/packages before any build is tried.
#
# Built by scripts/build-standin-images.sh, with a context holding this file
# and ca-certificates/ (the site's extra CAs, copied in at build time, never
# committed).
ARG BASE=localhost/autolab-site-base:bookworm
FROM ${BASE}
ARG BASE
ARG RECIPE=unknown

LABEL org.autolab.standin="true" \
      org.autolab.standin.for="ubuntu:22.04" \
      org.autolab.standin.archive="debian bookworm" \
      org.autolab.standin.base="${BASE}" \
      org.autolab.standin.packages="/usr/share/autolab-standin/packages" \
      org.autolab.standin.recipe="${RECIPE}" \
      org.opencontainers.image.title="autolab-standin-ubuntu" \
      org.opencontainers.image.description="Stand-in for ubuntu:22.04 built from Debian bookworm; not the published image"

# The egress proxy re-signs TLS with the site's CA: without it in the system
# store, anything fetched over https inside a task's build fails.
COPY ca-certificates/ /usr/local/share/ca-certificates/

# - sources: bookworm plus its updates and security suites, as Debian's own
#   image has (the base image carries bookworm main only).
# - dpkg-divert of EXTERNALLY-MANAGED: Ubuntu 22.04 has no PEP 668 marker, so
#   its `apt-get install python3-pip && pip install X` works; Debian's marker
#   would refuse it. A diversion (not a plain rm) survives a task's upgrade of
#   libpython3.11-stdlib, which would otherwise put the marker back.
# - the packages file: every name the archive offers, for a preflight that
#   says without a build which package this archive lacks.
# - apt lists and caches removed afterwards, like a real image: task
#   Dockerfiles run `apt-get update` themselves (apt-get clean drops the
#   80 MB of pkgcache.bin that update leaves).
RUN set -eu; \
    printf '%s\n' \
      'deb http://deb.debian.org/debian bookworm main' \
      'deb http://deb.debian.org/debian bookworm-updates main' \
      'deb http://deb.debian.org/debian-security bookworm-security main' \
      > /etc/apt/sources.list; \
    update-ca-certificates >/dev/null; \
    for marker in /usr/lib/python3*/EXTERNALLY-MANAGED; do \
      dpkg-divert --local --rename --divert "$marker.standin" --add "$marker"; \
    done; \
    apt-get update -qq; \
    mkdir -p /usr/share/autolab-standin; \
    apt-cache pkgnames | LC_ALL=C sort -u > /usr/share/autolab-standin/packages; \
    grep -qx python3 /usr/share/autolab-standin/packages; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*

CMD ["/bin/bash"]
