#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script.  In the image of
# .clusterfuzzlite/Dockerfile it is $SRC/build.sh and the checkout is
# $SRC/tracebench; it runs with the contract's variables ($CC, $CFLAGS,
# $CXX, $CXXFLAGS, $LIB_FUZZING_ENGINE, $OUT, $WORK, $SRC) set by the
# base image for the sanitizer asked for.  The work is done by
# fuzz/oss-fuzz-build.sh (every harness of fuzz/run.sh, with its seed
# corpus zip, dictionary and options file); scripts/test-oss-fuzz-build.sh
# runs this script outside Docker.
if [ -n "${SRC:-}" ] && [ -f "$SRC/tracebench/fuzz/oss-fuzz-build.sh" ]; then
  exec bash "$SRC/tracebench/fuzz/oss-fuzz-build.sh"
fi
# Outside the image: the checkout this script is in.
exec bash "$(cd "$(dirname "$0")/.." && pwd)/fuzz/oss-fuzz-build.sh"
