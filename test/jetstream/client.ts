// What the JetStream tests that drive the nats v2 client share: a server with JetStream
// and one connection to it, consumer configurations written with the wire's field names,
// and the next messages of a subscription.

import { connect, type ConsumerConfig, type Msg, type NatsConnection } from 'nats';
import { withServer } from '../helpers/server.js';

/** Runs `body` with a connection to a fresh embedded server with JetStream (memory only). */
export async function withClient(body: (nc: NatsConnection) => Promise<void>): Promise<void> {
  await withServer({ jetstream: true }, async (s) => {
    const nc = await connect({ servers: `127.0.0.1:${s.port}` });
    try {
      await body(nc);
    } finally {
      await nc.close();
    }
  });
}

/** A consumer config with fields the v2 client's types mark deprecated (still the wire's). */
export function consumerConfig(fields: Record<string, unknown>): Partial<ConsumerConfig> {
  return fields;
}

/** The next `n` messages on `subject`, subscribed before `start` runs. */
export async function take(
  nc: NatsConnection,
  subject: string,
  n: number,
  start: () => Promise<void>,
): Promise<Msg[]> {
  const sub = nc.subscribe(subject, { max: n });
  await start();
  const out: Msg[] = [];
  for await (const m of sub) out.push(m);
  return out;
}
