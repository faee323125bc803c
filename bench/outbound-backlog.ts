// Output to a subscriber that reads slower than the server writes (a streaming
// catch-up's): MSG-sized records go into an Outbound, flushed once per turn to a
// loopback socket whose reader, another process, pauses after every 256 KiB. With
// the block pool (src/server/outbound.ts) the blocks the socket has written are
// filled again; without it every 64 KiB is a new ArrayBuffer, and that external
// memory starts mark-compacts. Prints, per variant and round, the mark-compacts, the
// main process's CPU per MB and the blocks allocated; both variants alternate.
//
//   node dist/bench/outbound-backlog.js [MB per run, default 200] [rounds, default 3]

import { fork } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { Outbound, pooledBlocks } from '../src/server/outbound.js';

if (process.argv[2] === 'reader') {
  // The slow reader: connects, reads, pauses 1 ms after every 256 KiB.
  const { connect } = await import('node:net');
  const socket = connect(Number(process.argv[3]), '127.0.0.1');
  let since = 0;
  socket.on('data', (chunk: Buffer) => {
    since += chunk.length;
    if (since >= 256 * 1024) {
      since = 0;
      socket.pause();
      setTimeout(() => socket.resume(), 1);
    }
  });
  socket.on('close', () => process.exit(0));
} else {
  const mb = Number(process.argv[2] ?? '200');
  const rounds = Number(process.argv[3] ?? '3');
  const RECORD = 1024 + 40;
  let majors = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  const allocUnsafe = Buffer.allocUnsafe.bind(Buffer);
  let blocks = 0;
  Buffer.allocUnsafe = ((n: number): Buffer => {
    if (n === 64 * 1024) blocks++;
    return allocUnsafe(n);
  }) as typeof Buffer.allocUnsafe;

  const run = async (recycles: boolean): Promise<string> => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const accepted = new Promise<Socket>((r) => server.once('connection', r));
    const reader = fork(new URL(import.meta.url).pathname, ['reader', String(port)]);
    const socket = await accepted;
    const out = new Outbound();
    out.recycles = recycles;
    const record = Buffer.alloc(RECORD, 120);
    const total = mb * 1024 * 1024;
    majors = 0;
    blocks = 0;
    const cpu0 = process.cpuUsage();
    let sent = 0;
    while (sent < total) {
      // About a MaxInflight window's worth per turn while the socket keeps up, less
      // once it holds a backlog (the streaming layer's congestion pause).
      const room = socket.writableLength > 4 * 1024 * 1024 ? 0 : 256 * 1024;
      for (let n = 0; n < room; n += RECORD) {
        out.reserve(RECORD);
        record.copy(out.buf, out.pos);
        out.pos += RECORD;
        sent += RECORD;
      }
      out.flush(socket);
      await turn();
    }
    while (socket.writableLength > 0) await turn();
    const cpu = process.cpuUsage(cpu0);
    const result =
      `${recycles ? 'pool   ' : 'no pool'}: ${majors} mark-compacts, ` +
      `${((cpu.user + cpu.system) / mb).toFixed(0)} µs CPU per MB, ${blocks} blocks allocated`;
    socket.end();
    await new Promise((r) => reader.once('exit', r));
    server.close();
    return result;
  };
  for (let r = 0; r < rounds; r++) {
    for (const recycles of r % 2 === 0 ? [false, true] : [true, false]) {
      console.log(`round ${r + 1} ${await run(recycles)} (pool holds ${pooledBlocks()})`);
    }
  }
  obs.disconnect();
}
