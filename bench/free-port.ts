// A loopback port nobody listens on right now, for the servers a benchmark starts.

import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const a = s.address();
  await new Promise<void>((resolve) => s.close(() => resolve()));
  if (typeof a !== 'object' || a === null) throw new Error('no port');
  return a.port;
}
