#!/usr/bin/env bash
# Steady-state server CPU per streaming message, wirebus builds and the reference
# interleaved: each round starts every server fresh, warms it up with 100,000
# messages, then counts the server's CPU time (utime + stime from /proc) over
# 300,000 more of one stanbench scenario. CPU per message is steadier than msgs/s on
# a shared machine, and leaves out the JIT warm-up that the first run of
# stan-compare.sh pays.
#
#   bench/stan-cpu.sh REPO_DIR... [ref]
#   SC=pubsub SZ=1024 bench/stan-cpu.sh . /tmp/wirebus-before ref
#
# REPO_DIR is a built checkout (its bin/wirebus runs); `ref` is the reference at
# $STAN_REF_BIN (default /tmp/stan-ref/nats-streaming-server). SC is the stanbench
# scenario (pub, pubsub; default pub), SZ the payload size (default 128), ST the store
# (MEMORY or FILE, default MEMORY; FILE gets a fresh directory per server, removed
# after), ROUNDS (default 3), STANBENCH the load generator (default
# ../shared/bench/out/stanbench, built by ../shared/bench/build.sh). Besides the warm
# figure, `cold` is the CPU per message of the warm-up itself (a fresh server's
# first 100,000: what stan-compare.sh's first scenario pays). Loopback only; stops
# only what it started.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sb=${STANBENCH:-$here/../../shared/bench/out/stanbench}
ref_bin=${STAN_REF_BIN:-/tmp/stan-ref/nats-streaming-server}
sc=${SC:-pub}
sz=${SZ:-128}
st=${ST:-MEMORY}
case "$st" in MEMORY | FILE) ;; *) echo "stan-cpu.sh: ST must be MEMORY or FILE" >&2; exit 2 ;; esac
[ -x "$sb" ] || { echo "stan-cpu.sh: no stanbench at $sb (set STANBENCH)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: stan-cpu.sh REPO_DIR... [ref]" >&2; exit 2; }
hz=$(getconf CLK_TCK)
for round in $(seq "${ROUNDS:-3}"); do
  for side in "$@"; do
    port=$("$(dirname "$sb")/natsbench" freeport 2>/dev/null || echo $((20000 + RANDOM % 20000)))
    store=(-st "$st")
    data=""
    if [ "$st" = FILE ]; then
      data=$(mktemp -d /tmp/stan-cpu.XXXXXX)
      store+=(--dir "$data/store")
    fi
    if [ "$side" = ref ]; then
      "$ref_bin" -a 127.0.0.1 -p "$port" -cid test-cluster "${store[@]}" >/dev/null 2>&1 &
    else
      node "$side/bin/wirebus" -a 127.0.0.1 -p "$port" -cid test-cluster "${store[@]}" >/dev/null 2>&1 &
    fi
    pid=$!
    for _ in $(seq 100); do "$sb" ping -s "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.2; done
    t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    "$sb" "$sc" -s "127.0.0.1:$port" -z "$sz" -n 100000 -d 20 >/dev/null
    t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    "$sb" "$sc" -s "127.0.0.1:$port" -z "$sz" -n 300000 -d 20 >/dev/null
    t2=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    echo "round $round  $side  $st $sc ${sz} B  cold $(( (t1 - t0) * 1000000000 / hz / 100000 )) ns/msg  warm $(( (t2 - t1) * 1000000000 / hz / 300000 )) ns/msg"
    kill "$pid"
    wait "$pid" 2>/dev/null
    [ -n "$data" ] && rm -rf "$data"
  done
done
