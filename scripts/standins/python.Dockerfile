# Stand-in for `python:3.x-slim` task images on a worker with no image
# registry: Debian bookworm's python3 (3.11) with pip usable the way the
# official image's is, under a name of our own (the labels say what it is).
# A task pinned to python:3.12-slim runs here on 3.11: the label
# org.autolab.standin.python says so.
#
# Built by scripts/build-standin-images.sh, with a context holding this file
# and ca-certificates/ (the site's extra CAs, copied in at build time, never
# committed).
ARG BASE=localhost/autolab-site-base:bookworm
FROM ${BASE}
ARG BASE
ARG RECIPE=unknown

LABEL org.autolab.standin="true" \
      org.autolab.standin.for="python:3.*-slim" \
      org.autolab.standin.archive="debian bookworm" \
      org.autolab.standin.python="3.11" \
      org.autolab.standin.base="${BASE}" \
      org.autolab.standin.packages="/usr/share/autolab-standin/packages" \
      org.autolab.standin.recipe="${RECIPE}" \
      org.opencontainers.image.title="autolab-standin-python" \
      org.opencontainers.image.description="Stand-in for python:3.x-slim built from Debian bookworm's python3 3.11; not the published image"

# The egress proxy re-signs TLS with the site's CA: pip (Debian's uses the
# system store) and apt need it in the store. SSL_CERT_FILE is for the tools
# that ignore the system store unless told (uv, which safety_router installs
# with pip, ships its own roots). LANG as the official image sets it.
COPY ca-certificates/ /usr/local/share/ca-certificates/
ENV LANG=C.UTF-8 \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt

# - sources: bookworm plus its updates and security suites, as Debian's own
#   image (which python:3.x-slim is built on) has.
# - pip, venv and `python`: the official image has all three.
# - PEP 668: the official image's python is not the distribution's, so
#   `pip install X` (and `uv pip install --system`) outside a venv works
#   there; Debian's marker refuses it. The marker is diverted (a plain rm
#   would come back with a libpython3.11-stdlib upgrade) and pip told in
#   /etc/pip.conf, for any marker a later package brings.
# - the packages file: every name the archive offers, for a preflight.
# - apt lists removed afterwards, like a real image.
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
    printf '[global]\nbreak-system-packages = true\n' > /etc/pip.conf; \
    apt-get update -qq; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3-pip python3-venv python-is-python3 >/dev/null; \
    mkdir -p /usr/share/autolab-standin; \
    apt-cache pkgnames | LC_ALL=C sort -u > /usr/share/autolab-standin/packages; \
    grep -qx python3 /usr/share/autolab-standin/packages; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*; \
    python --version; pip --version

CMD ["/bin/bash"]
