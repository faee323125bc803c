#!/usr/bin/env bash
# The connection storm beside the reference at any size (issue 14 names 2,000 and
# 10,000 connections; ../shared/bench/compare.sh runs 2,000 only):
#
#   bench/storm-compare.sh N ROUNDS label 'command' label 'command' ...
#   bench/storm-compare.sh 10000 4 nats-server 'exec nats-server -a $HOST -p $PORT' \
#     wirebus 'exec bin/wirebus -a $HOST -p $PORT'
#
# Each storm gets a fresh server (started as compare.sh starts one: setsid, one PING
# answered), the sides take turns, and the first label is the reference of the ratios.
# NATSBENCH names the natsbench binary built by ../shared/bench/build.sh.
set -uo pipefail
if [ $# -lt 4 ] || [ $(( ($# - 2) % 2 )) -ne 0 ]; then
  echo "usage: $0 N ROUNDS label 'command' [label 'command' ...]" >&2
  exit 2
fi
bin=${NATSBENCH:-$(dirname "$0")/../../shared/bench/out/natsbench}
if [ ! -x "$bin" ]; then
  echo "$0: no natsbench at $bin (build ../shared/bench, or set NATSBENCH)" >&2
  exit 2
fi
N=$1
ROUNDS=$2
shift 2
labels=()
cmds=()
while [ $# -gt 0 ]; do
  labels+=("$1")
  cmds+=("$2")
  shift 2
done
work=$(mktemp -d)
out=$work/storm.jsonl
sides=${#labels[@]}
for ((r = 0; r < ROUNDS; r++)); do
  for ((k = 0; k < sides; k++)); do
    i=$(((k + r) % sides))
    port=$("$bin" freeport)
    HOST=127.0.0.1 PORT=$port setsid bash -c "${cmds[$i]}" >"$work/${labels[$i]}.log" 2>&1 </dev/null &
    pid=$!
    for _ in $(seq 150); do
      "$bin" ping -s "127.0.0.1:$port" -t 1 >/dev/null 2>&1 && break
      sleep 0.1
    done
    sleep 0.3
    line=$("$bin" storm -s "127.0.0.1:$port" -N "$N" -T 4 -P "$pid" -L "${labels[$i]}" 2>&1 | tail -1)
    echo "{\"label\":\"${labels[$i]}\",\"round\":$r,\"result\":$line}" >>"$out"
    kill -TERM -- -"$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
done
node - "$out" <<'JS'
const { readFileSync } = require('node:fs');
const rows = readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const bySide = new Map();
for (const r of rows) {
  if (!bySide.has(r.label)) bySide.set(r.label, []);
  bySide.get(r.label).push(r.result);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
let refRate = 0;
console.log('| side | conns/s (median) | ratio | server CPU s | RSS at N conns MB | RSS per conn KB | ok |');
console.log('|---|---|---|---|---|---|---|');
for (const [label, rs] of bySide) {
  const rate = median(rs.map((r) => r.conns_per_sec));
  if (refRate === 0) refRate = rate;
  const perConn = median(rs.map((r) => ((r.rss_conns_kb - r.rss_before_kb) * 1.024) / r.conns));
  console.log(
    `| ${label} | ${Math.round(rate)} | ${(rate / refRate).toFixed(2)} | ${median(rs.map((r) => r.server_cpu_s)).toFixed(3)} | ${(median(rs.map((r) => r.rss_conns_kb)) / 1000).toFixed(1)} | ${perConn.toFixed(1)} | ${rs.filter((r) => r.ok).length}/${rs.length} |`,
  );
}
JS
echo "raw results and server logs: $work"
