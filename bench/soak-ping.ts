// The idle client of the soak (soak.ts): its own process, one plain TCP connection,
// a PING every 50 ms, the time to each PONG. What it sees is what any core client of
// the server sees while the streaming layer works: a long event-loop turn shows as a
// slow PONG. Prints one JSON line at the end (SIGTERM or --seconds).
//
//   node dist/bench/soak-ping.js PORT [--every-ms 50]

import { connect } from 'node:net';

const port = Number(process.argv[2]);
const everyMs = Number(argValue('--every-ms') ?? '50');

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const latencies: number[] = [];
/** Send times of the PINGs awaiting their PONG, oldest first. */
const outstanding: number[] = [];
let slowest = 0;
let slowestAt = 0;
let inbuf = '';
const started = Date.now();

const socket = connect({ host: '127.0.0.1', port }, () => {
  socket.write('CONNECT {"verbose":false,"pedantic":false,"name":"soak-ping"}\r\n');
});
socket.setNoDelay(true);
socket.setEncoding('latin1');
socket.on('data', (chunk: string) => {
  inbuf += chunk;
  let nl: number;
  while ((nl = inbuf.indexOf('\r\n')) >= 0) {
    const line = inbuf.slice(0, nl);
    inbuf = inbuf.slice(nl + 2);
    if (line === 'PONG') {
      const sent = outstanding.shift();
      if (sent === undefined) continue;
      const ms = performance.now() - sent;
      latencies.push(ms);
      if (ms > slowest) {
        slowest = ms;
        slowestAt = (Date.now() - started) / 1000;
      }
    } else if (line === 'PING') {
      socket.write('PONG\r\n');
    }
  }
});
socket.on('error', () => {
  finish(false);
});

const timer = setInterval(() => {
  outstanding.push(performance.now());
  socket.write('PING\r\n');
}, everyMs);

let done = false;
function finish(ok: boolean): void {
  if (done) return;
  done = true;
  clearInterval(timer);
  // A PING still unanswered counts with the time it has waited so far.
  const now = performance.now();
  for (const sent of outstanding) {
    const ms = now - sent;
    if (ms > slowest) slowest = ms;
  }
  const sorted = latencies.slice().sort((a, b) => a - b);
  const pct = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  process.stdout.write(
    JSON.stringify({
      ok,
      pings: latencies.length,
      unanswered: outstanding.length,
      slowest_ms: round(slowest),
      slowest_at_s: round(slowestAt),
      p50_ms: round(pct(0.5)),
      p99_ms: round(pct(0.99)),
      p999_ms: round(pct(0.999)),
      over_20ms: latencies.filter((l) => l > 20).length,
      over_100ms: latencies.filter((l) => l > 100).length,
    }) + '\n',
  );
  socket.destroy();
  process.exit(0);
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

process.on('SIGTERM', () => {
  finish(true);
});
