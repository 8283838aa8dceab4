#!/usr/bin/env bash
# Builds the project's offline base image for container backends, when missing.
#
# No registry is reachable on CI or on an offline worker host, so the example
# tasks do not use Docker Hub's python image: they build FROM this image,
# made with debootstrap from the Debian mirror apt already uses, and named for
# what it is (Debian bookworm's minbase with python3, bash and tmux; tmux is
# what terminus-2 drives inside the container).
#
#   scripts/build-base-image.sh            # build when the image is missing
#   scripts/build-base-image.sh --force    # build again
#   ENGINE=docker scripts/build-base-image.sh
#
# A cached root filesystem tarball (AUTOLAB_BASE_IMAGE_CACHE, default
# /var/cache/autolab-site/base-bookworm.tar) is reused when present, so a new
# podman store (a clean CI machine) imports it in seconds instead of running
# debootstrap again; nothing depends on the cache being there.
set -euo pipefail

IMAGE=${AUTOLAB_BASE_IMAGE:-localhost/autolab-site-base:bookworm}
ENGINE=${ENGINE:-podman}
CACHE=${AUTOLAB_BASE_IMAGE_CACHE:-/var/cache/autolab-site/base-bookworm.tar}
SUITE=bookworm
PACKAGES=python3,bash,coreutils,procps,tmux,ca-certificates

force=0
[ "${1:-}" = "--force" ] && force=1

# `image inspect`: podman's `image exists` has no Docker equivalent.
if [ $force = 0 ] && $ENGINE image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "base image $IMAGE is present"
  exit 0
fi

if [ $force = 1 ] || [ ! -s "$CACHE" ]; then
  command -v debootstrap >/dev/null || { echo "debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
  root=$(mktemp -d /var/tmp/autolab-base.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  echo "debootstrap $SUITE ($PACKAGES) into $root (a few minutes)"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" >/dev/null
  # Keep the image small: no package lists or caches.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  mkdir -p "$(dirname "$CACHE")"
  tar -C "$root" -cf "$CACHE.partial" .
  mv "$CACHE.partial" "$CACHE"
fi

echo "importing $CACHE as $IMAGE"
$ENGINE import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' \
  "$CACHE" "$IMAGE" >/dev/null
echo "base image $IMAGE built"
