# Stand-in for `python:3.x-slim` task images on a worker with no image
# registry: Debian bookworm's python3 (3.11) with pip usable the way the
# official image's is (setup-archive.sh), under a name of our own (the labels
# say what it is). A task pinned to python:3.12-slim runs here on 3.11: the
# label org.autolab.standin.python says so.
#
# Built by scripts/build-standin-images.sh, with a context holding this file,
# setup-archive.sh and ca-certificates/ (the site's extra CAs, copied in at
# build time, never committed).
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

# LANG as the official image sets it. SSL_CERT_FILE for the tools that ignore
# the system store unless told: uv (safety_router installs it with pip and
# runs `uv pip install --system`) ships its own roots and fails on the egress
# proxy's certificate without it.
ENV LANG=C.UTF-8 \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt

COPY ca-certificates/ /usr/local/share/ca-certificates/
COPY setup-archive.sh /tmp/setup-archive.sh
# pip, venv and `python`: the official image has all three.
RUN sh /tmp/setup-archive.sh python3-pip python3-venv python-is-python3 \
    && rm /tmp/setup-archive.sh \
    && python --version && pip --version

CMD ["/bin/bash"]
