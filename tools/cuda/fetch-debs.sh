#!/usr/bin/env bash
# Downloads the Debian 12 packages tools/cuda/check.sh builds with, for a GPU
# machine that has PyTorch, meson and ninja but no package registry: run it
# where apt works, carry the folder over, pass it as --debs.
#   tools/cuda/fetch-debs.sh [DIR]     (default: tools/cuda/debs)
set -euo pipefail
DIR=${1:-"$(dirname "$0")/debs"}
mkdir -p "$DIR"
cd "$DIR"
# The -dev packages (headers, .pc files, .so links) and their runtime
# libraries; pkgconf in case the GPU machine has no pkg-config.
apt-get download \
  libjson-c-dev libjson-c5 libxxhash-dev libxxhash0 libuv1-dev libuv1 \
  libzstd-dev libzstd1 check libsubunit-dev libsubunit0 \
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 \
  libutf8proc-dev libutf8proc2 pkgconf pkgconf-bin libpkgconf3
ls -1 "$PWD"/*.deb
