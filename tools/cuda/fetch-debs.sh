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
# Open MPI 4.1 (libbosch-mpi, `mpirun -np 2 bosch search`), run from the
# unpacked folder (check.sh sets OPAL_PREFIX and PMIX_*): mpirun and the
# wrappers, libmpi with its headers and .pc files, and the libraries that
# they and their plugins load (libopenmpi3's dependencies: PMIx, hwloc,
# libevent, munge; the transports' libfabric, UCX, verbs, PSM, libnl and
# libnuma, so that every plugin loads). libudev1 (hwloc's) is used only where
# the machine has none. Not fetched: the -dev packages of those libraries
# (mpi.h needs none), hwloc's plugins (PCI, GL, OpenCL), compilers, perl.
apt-get download \
  libjson-c-dev libjson-c5 libjansson-dev libjansson4 libxxhash-dev libxxhash0 libuv1-dev libuv1 \
  libzstd-dev libzstd1 check libsubunit-dev libsubunit0 \
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 \
  libutf8proc-dev libutf8proc2 pkgconf pkgconf-bin libpkgconf3 \
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15 \
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libmunge2 libudev1 \
  libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1 libpsm2-2 \
  libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libnuma1
ls -1 "$PWD"/*.deb
