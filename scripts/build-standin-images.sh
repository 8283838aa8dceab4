#!/usr/bin/env bash
# Builds the stand-in images the real AutoLab tasks' base images are mapped to
# on a worker with no image registry (scripts/standins/mirrors.txt, the
# AUTOLAB_IMAGE_MIRRORS map CI uses), when missing or out of date:
#
#   localhost/autolab-standin-ubuntu:bookworm   for ubuntu:22.04
#   localhost/autolab-standin-python:bookworm   for python:3.x-slim
#
# Both are the project's base image (scripts/build-base-image.sh, Debian
# bookworm) under names of our own, with labels saying what they stand in for,
# so a run on one is never mistaken for a run on the published image. Each
# carries /usr/share/autolab-standin/packages, every package name its apt
# archive offers, so a preflight can say without a build that a task's
# `linux-tools-generic` is Ubuntu's and not there.
#
#   scripts/build-standin-images.sh            # build what is missing or stale
#   scripts/build-standin-images.sh --force    # build again, no layer cache
#   ENGINE=docker scripts/build-standin-images.sh
#
# The site's extra CA certificates (AUTOLAB_STANDIN_CA_DIR, default
# /usr/local/share/ca-certificates: the egress proxy's) are copied into a
# temporary build context, never into the repository, so apt and pip over the
# proxy work inside task builds.
set -euo pipefail

ENGINE=${ENGINE:-podman}
BASE=${AUTOLAB_BASE_IMAGE:-localhost/autolab-site-base:bookworm}
CA_DIR=${AUTOLAB_STANDIN_CA_DIR:-/usr/local/share/ca-certificates}
HERE=$(cd "$(dirname "$0")" && pwd)
STANDINS="ubuntu python"

force=0
no_cache=()
# --force skips the engine's layer cache too: otherwise the apt step would be
# reused and the archive (its security updates, its package list) not re-read.
[ "${1:-}" = "--force" ] && force=1 && no_cache=(--no-cache)

context=$(mktemp -d /var/tmp/autolab-standin.XXXXXX)
trap 'rm -rf "$context"' EXIT

if ! base_id=$($ENGINE image inspect --format '{{.Id}}' "$BASE" 2>"$context/inspect.err"); then
  why=$(head -1 "$context/inspect.err")
  # A stopped dockerd also fails the inspect: say which of the two it is.
  if printf '%s' "$why" | grep -qiE 'no such image|image not known'; then
    echo "the base image $BASE is missing in $ENGINE (ENGINE=$ENGINE scripts/build-base-image.sh builds it)" >&2
  else
    echo "$ENGINE cannot be asked for the base image $BASE: $why" >&2
  fi
  exit 1
fi

cp "$HERE/standins/setup-archive.sh" "$context/"
mkdir "$context/ca-certificates"
if [ -d "$CA_DIR" ]; then
  # -L: a CA installed as a link must arrive as its content.
  cp -rL "$CA_DIR"/. "$context/ca-certificates/"
fi

for name in $STANDINS; do
  image=localhost/autolab-standin-$name:bookworm
  cp "$HERE/standins/$name.Dockerfile" "$context/"
  # The recipe is what the image is made of: its Dockerfile and the archive
  # set-up it runs, the base image it was built on and the CAs baked in. An image whose label differs is stale
  # (a rebuilt base, a new CA, an edited Dockerfile) and is built again, so an
  # old stand-in never outlives the change that should have replaced it.
  recipe=$({
    cat "$context/$name.Dockerfile" "$context/setup-archive.sh"
    echo "$base_id"
    (cd "$context/ca-certificates" && find . -type f | LC_ALL=C sort | xargs -r sha256sum)
  } | sha256sum | cut -c1-16)
  # `image inspect`: podman's `image exists` has no Docker equivalent.
  have=$($ENGINE image inspect --format '{{index .Config.Labels "org.autolab.standin.recipe"}}' "$image" 2>/dev/null || true)
  if [ $force = 0 ] && [ "$have" = "$recipe" ]; then
    echo "stand-in $image is present"
    continue
  fi
  echo "building $image in $ENGINE (from $BASE)"
  start=$(date +%s)
  # The build log is kept out of the way and shown only when it fails: the
  # reason (an apt mirror out of reach, a missing package) is near its end.
  if ! $ENGINE build "${no_cache[@]}" --build-arg "BASE=$BASE" --build-arg "RECIPE=$recipe" \
      -f "$context/$name.Dockerfile" -t "$image" "$context" >"$context/$name.log" 2>&1; then
    tail -25 "$context/$name.log" >&2
    echo "building $image in $ENGINE failed" >&2
    exit 1
  fi
  echo "stand-in $image built in $(( $(date +%s) - start )) s"
done
