#!/usr/bin/env bash
# Builds scripts/ns3/aqm.cc against the ns-3 of the PyPI wheel `ns3==3.44.post0` (as
# tools/ns3/build.sh does): NS3_PYTHON=<python of a venv with the wheel> (default
# python3). The binary goes to $OUT (default /tmp/quicksim-ns3-aqm/aqm); CI never needs this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="$("${NS3_PYTHON:-python3}" -c 'import ns3; print(list(ns3.__path__)[0])')"
LIBDIR="$PREFIX/lib64"
VER="$(ls "$LIBDIR" | sed -n 's/^libns3\.\([0-9.]*\)-core\.so$/\1/p' | head -n1)"
OUT="${OUT:-/tmp/quicksim-ns3-aqm/aqm}"
mkdir -p "$(dirname "$OUT")"
LIBS=()
for m in applications internet point-to-point traffic-control network stats bridge core; do
    LIBS+=("-lns3.${VER}-${m}")
done
"${CXX:-g++}" -std=c++20 -O2 -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE -D__LINUX__ \
    -I"$PREFIX/include" "$here/aqm.cc" -o "$OUT" \
    -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -Wl,--no-as-needed "${LIBS[@]}" -lpthread
echo "$OUT (ns-3.$VER)"
