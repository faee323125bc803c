// A connection to a server a benchmark has just spawned: tried every 100 ms until it
// listens (five seconds at most).

import { connect, type NatsConnection } from 'nats';

export async function connectWhenReady(port: number, who: string): Promise<NatsConnection> {
  for (let i = 0; i < 50; i++) {
    try {
      return await connect({ servers: `127.0.0.1:${port}` });
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${who} did not start`);
}
