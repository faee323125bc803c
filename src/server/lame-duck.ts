// Lame duck mode (SIGUSR2, `--signal ldm`, or `server.lameDuckShutdown()`), as the
// reference's lameDuckMode (spec §8): stop accepting, tell the clients that take
// async INFO with `"ldm":true`, wait `lame_duck_grace_period`, then close the
// clients one by one, spread over the rest of `lame_duck_duration` (at most 1 s
// apart), and shut down. Clients reconnect elsewhere a few at a time instead of all
// at once.

import { CloseReason } from '../protocol/errors.js';
import { sendAsyncInfo } from './async-info.js';
import type { Server } from './server.js';

const running = new WeakMap<Server, Promise<void>>();

/** Enters lame duck mode; resolves once the server has shut down. */
export function lameDuckShutdown(server: Server): Promise<void> {
  let p = running.get(server);
  if (p === undefined) {
    p = lameDuck(server);
    running.set(server, p);
  }
  return p;
}

async function lameDuck(server: Server): Promise<void> {
  if (server.shuttingDown || !server.ready) {
    await server.close();
    return;
  }
  server.logger.info('Entering lame duck mode, stop accepting new clients');
  server.lameDuck = true;
  server.stopAccepting();

  const clients = [...server.clients.values()].filter((c) => c.kind === 'client' && !c.closed);
  if (clients.length === 0) {
    await server.close();
    return;
  }
  const o = server.options;
  const grace = Math.abs(o.lameDuckGracePeriod);
  let duration = o.lameDuckDuration - grace;
  if (duration <= 0) duration = 1000;
  // The pause between two closes: the duration shared out, at most 1 s; with more
  // clients than milliseconds, several close per pause.
  let interval = duration / clients.length;
  let batch = 1;
  if (interval < 1) {
    interval = 1;
    batch = Math.floor(clients.length / duration);
  } else if (interval > 1000) {
    interval = 1000;
  }
  // As the reference: the routes hear of it first, then the clients.
  server.cluster?.lameDuck();
  sendAsyncInfo(server, { ldm: true });

  const sleep = cancellableSleep(server);
  if (!(await sleep(grace))) return;
  server.logger.info('Closing existing clients');
  for (let i = 0; i < clients.length; i++) {
    clients[i]!.close(CloseReason.serverShutdown);
    if (i === clients.length - 1) break;
    if (batch === 1 || i % batch === 0) {
      // A random pause of at least half the interval, as the reference.
      const pause = Math.max(Math.random() * interval, interval / 2);
      if (!(await sleep(pause))) return;
    }
  }
  await server.close();
}

/** A sleep that ends early, resolving false, when the server shuts down meanwhile. */
function cancellableSleep(server: Server): (ms: number) => Promise<boolean> {
  let wake: (() => void) | null = null;
  server.onShutdown(() => {
    wake?.();
    return Promise.resolve();
  });
  return (ms) =>
    new Promise<boolean>((resolve) => {
      if (server.shuttingDown) {
        resolve(false);
        return;
      }
      const timer = setTimeout(() => {
        wake = null;
        resolve(!server.shuttingDown);
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve(false);
      };
    });
}
