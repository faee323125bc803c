// The ceiling of clustered streaming's publish path: one Node publisher (the `nats`
// client, as the Leader uses it) putting N messages into a fresh three-replica
// stream, each with the Leader's two headers (Nats-Expected-Last-Sequence and
// Stan-Timestamp), a window of 16384 unacknowledged, and the same without headers.
// A clustered Leader cannot store faster than this: run it beside the streaming
// benchmark on the same JetStream cluster (bench/stan-clustered.sh starts one).
// bench/native/jetstream-ceiling.go does the same with the Go client: run both,
// interleaved, to tell the engine's limit from the Node client's.
//
//   URLS=nats://127.0.0.1:4222,nats://127.0.0.1:4223,nats://127.0.0.1:4224 \
//     N=100000 SIZE=128 node dist/bench/jetstream-ceiling.js

import { connect, createInbox, headers, type MsgHdrs } from 'nats';

const URLS = (process.env.URLS ?? 'nats://127.0.0.1:4222').split(',');
const N = Number(process.env.N ?? '100000');
const SIZE = Number(process.env.SIZE ?? '128');
const WINDOW = 16384;

async function run(withHeaders: boolean): Promise<number> {
  const nc = await connect({ servers: URLS });
  const jsm = await nc.jetstreamManager();
  const name = `CEILING_${Date.now()}`;
  await jsm.streams.add({ name, subjects: [`${name}.x`], num_replicas: 3 });
  const data = new Uint8Array(SIZE);
  const inbox = createInbox();
  let acked = 0;
  let sent = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const pump = (): void => {
    while (sent < N && sent - acked < WINDOW) {
      sent++;
      let h: MsgHdrs | undefined;
      if (withHeaders) {
        h = headers();
        h.set('Nats-Expected-Last-Sequence', String(sent - 1));
        h.set('Stan-Timestamp', String(Date.now() * 1e6));
      }
      nc.publish(`${name}.x`, data, { reply: inbox, ...(h !== undefined ? { headers: h } : {}) });
    }
  };
  nc.subscribe(inbox, {
    callback: () => {
      acked++;
      if (acked === N) done();
      else if (sent - acked < WINDOW / 2) pump();
    },
  });
  const start = performance.now();
  pump();
  await finished;
  const rate = (N * 1000) / (performance.now() - start);
  await jsm.streams.delete(name);
  await nc.close();
  return rate;
}

for (const withHeaders of [true, false]) {
  const rate = await run(withHeaders);
  console.log(
    JSON.stringify({
      scenario: 'jetstream-r3-pub',
      headers: withHeaders,
      size: SIZE,
      msgs: N,
      msgs_per_sec: Math.round(rate),
    }),
  );
}
