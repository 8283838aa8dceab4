# Stand-in for `ubuntu:22.04`-style task images on a worker with no image
# registry: Debian bookworm under a name of our own, never Ubuntu's, so a run
# on it cannot be mistaken for one on the published environment (the labels
# say what it is). The real tasks' Dockerfiles only run `apt-get update &&
# apt-get install gcc make python3 tmux ...`, which Debian's archive honours;
# Ubuntu-only packages (linux-tools-generic) are named as missing by
# /usr/share/autolab-standin/packages before any build is tried.
#
# Built by scripts/build-standin-images.sh, with a context holding this file,
# setup-archive.sh and ca-certificates/ (the site's extra CAs, copied in at
# build time, never committed).
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

COPY ca-certificates/ /usr/local/share/ca-certificates/
COPY setup-archive.sh /tmp/setup-archive.sh
RUN sh /tmp/setup-archive.sh && rm /tmp/setup-archive.sh

CMD ["/bin/bash"]
