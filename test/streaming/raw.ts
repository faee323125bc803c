// Raw streaming protocol requests through the nats v2 client: exact bytes in, the
// decoded reply out, for checks the streaming client hides (error texts, fields).

import { connect, type NatsConnection } from 'nats';

export async function natsConnect(url: string): Promise<NatsConnection> {
  return connect({ servers: url, reconnect: false });
}

/** The reply's payload, or null on timeout or no responders. */
export async function request(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  timeout = 1000,
): Promise<Uint8Array | null> {
  try {
    const m = await nc.request(subject, data, { timeout });
    return m.data;
  } catch {
    return null;
  }
}
