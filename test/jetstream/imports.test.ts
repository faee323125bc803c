// JetStream used from another account through service imports of `$JS.API.>` and
// `$JS.ACK.>`, the usual way to share one account's streams. A pull request's reply comes
// into the exporter as an `_R_.` subject; the consumer delivers to it, the message goes
// back under the stream's subject, and the request lives as long as the requester's own
// inbox has a listener (the reference's trackDownAccountAndInterest). The expectations
// were recorded from nats-server 2.9.10 with the same accounts and steps.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckPolicy, connect, type Msg } from 'nats';
import { withServer } from '../helpers/server.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('a pull consumer serves requests made from an importing account, as the reference', async () => {
  await withServer(
    {
      jetstream: true,
      security: {
        accounts: {
          JS: {
            users: [{ user: 'js', password: 'js' }],
            jetstream: {},
            exports: [
              { kind: 'service', subject: '$JS.API.>', responseType: 'stream' },
              { kind: 'service', subject: '$JS.ACK.>' },
            ],
          },
          APP: {
            users: [{ user: 'app', password: 'app' }],
            imports: [
              { kind: 'service', account: 'JS', subject: '$JS.API.>' },
              { kind: 'service', account: 'JS', subject: '$JS.ACK.>' },
            ],
          },
        },
      },
    },
    async (s) => {
      const servers = `127.0.0.1:${s.port}`;
      const owner = await connect({ servers, user: 'js', pass: 'js' });
      const app = await connect({ servers, user: 'app', pass: 'app' });
      try {
        const jsm = await owner.jetstreamManager();
        await jsm.streams.add({ name: 'S', subjects: ['s.>'] });
        await jsm.consumers.add('S', { durable_name: 'P', ack_policy: AckPolicy.Explicit });
        for (let i = 0; i < 3; i++) await owner.jetstream().publish('s.x', enc.encode(`m${i}`));

        const got: Msg[] = [];
        const sub = app.subscribe('_INBOX.app1', { callback: (_e, m) => got.push(m) });
        app.publish(
          '$JS.API.CONSUMER.MSG.NEXT.S.P',
          enc.encode('{"batch":2,"expires":2000000000}'),
          {
            reply: '_INBOX.app1',
          },
        );
        await waitFor(() => got.length === 2);
        // Under the stream's subject, with the ack reply, as the reference delivers them.
        assert.deepEqual(
          got.map((m) => [
            m.subject,
            m.reply?.replace(/\.\d{16,}\./, '.<ts>.'),
            dec.decode(m.data),
          ]),
          [
            ['s.x', '$JS.ACK.S.P.1.1.1.<ts>.2', 'm0'],
            ['s.x', '$JS.ACK.S.P.1.2.2.<ts>.1', 'm1'],
          ],
        );
        // The ack goes back through the other import.
        app.publish(got[0]!.reply!, enc.encode('+ACK'));
        await app.flush();
        await waitFor(async () => (await jsm.consumers.info('S', 'P')).ack_floor.stream_seq === 1);
        const info = await jsm.consumers.info('S', 'P');
        assert.deepEqual(
          [
            info.num_ack_pending,
            info.num_waiting,
            info.ack_floor.stream_seq,
            info.delivered.stream_seq,
          ],
          [1, 0, 1, 2],
        );
        sub.unsubscribe();

        // A requester that goes away: its request waits no longer, and a later message
        // stays in the stream for the next one (the reference: 0 waiting, 2 pending, 3).
        const gone = await connect({ servers, user: 'app', pass: 'app' });
        gone.subscribe('_INBOX.app2');
        gone.publish(
          '$JS.API.CONSUMER.MSG.NEXT.S.P',
          enc.encode('{"batch":5,"expires":5000000000}'),
          {
            reply: '_INBOX.app2',
          },
        );
        await gone.flush();
        await waitFor(async () => (await jsm.consumers.info('S', 'P')).delivered.stream_seq === 3);
        assert.equal((await jsm.consumers.info('S', 'P')).num_waiting, 1);
        await gone.close();
        await sleep(100);
        await owner.jetstream().publish('s.x', enc.encode('late'));
        await sleep(200);
        const after = await jsm.consumers.info('S', 'P');
        assert.deepEqual(
          [after.num_waiting, after.num_ack_pending, after.delivered.stream_seq],
          [0, 2, 3],
        );
      } finally {
        await app.close();
        await owner.close();
      }
    },
  );
});

async function waitFor(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await done()) return;
    await sleep(25);
  }
  assert.fail('never happened');
}
