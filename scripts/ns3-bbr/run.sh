#!/usr/bin/env bash
# Builds scripts/ns3-bbr/tcp-bbr.cc against the ns-3.44 PyPI wheel and writes the committed
# table python/quicksim/reproduce/data/ns3_bbr_tcp.csv (TcpBbr, 30 s), with a header saying how.
#   NS3_PYTHON   a Python with `pip install ns3==3.44.post0` (default python3)
#   OUT          the CSV to write (default: the committed one)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
NS3_PREFIX="${NS3_PREFIX:-$("${NS3_PYTHON:-python3}" -c 'import ns3; print(list(ns3.__path__)[0])')}"
LIBDIR="${NS3_PREFIX}/lib64"
VER="$(ls "$LIBDIR" | sed -n 's/^libns3\.\([0-9.]*\)-core\.so$/\1/p' | head -n1)"
LIBS=()
for m in applications internet point-to-point traffic-control network stats bridge core; do
    LIBS+=("-lns3.${VER}-${m}")
done
bin="$(mktemp -d)/tcp-bbr"
"${CXX:-g++}" -std=c++20 -O2 -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE -D__LINUX__ \
    -I"${NS3_PREFIX}/include" "$here/tcp-bbr.cc" -o "$bin" \
    -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -Wl,--no-as-needed "${LIBS[@]}" -lpthread
out="${OUT:-$repo/python/quicksim/reproduce/data/ns3_bbr_tcp.csv}"
{
    echo "# ns-3.${VER} TcpBbr on examples/tcp/tcp-bbr-example.cc's scenario, 30 s, one row per 0.1 s"
    echo "# made by: scripts/ns3-bbr/run.sh (tcp-bbr.cc --tcp=TcpBbr --stop=30), $(date -u +%Y-%m-%d)"
    "$bin" --tcp=TcpBbr --stop=30
} > "$out"
echo "wrote $out"
