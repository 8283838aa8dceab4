#!/usr/bin/env bash
# Prints the path of a Python 3.12 interpreter: python3.12 on PATH, or pyenv's.
set -u
if python3.12 -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then
  command -v python3.12; exit 0
fi
if command -v pyenv >/dev/null 2>&1; then
  for v in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.12(\.|$)' | sort -V -r); do
    p=$(PYENV_VERSION=$v pyenv which python3.12 2>/dev/null) && [ -x "$p" ] && { echo "$p"; exit 0; }
  done
fi
for p in /usr/bin/python3.12 /usr/local/bin/python3.12; do
  [ -x "$p" ] && { echo "$p"; exit 0; }
done
echo "autolab-site needs Python 3.12 (python3.12 on PATH or under pyenv)" >&2
exit 1
