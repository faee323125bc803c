// The startup banner, as the reference prints it (STAN prefix, store limits table;
// values that are the defaults carry a `*`).

import type { StreamingServer } from './server.js';
import { STREAMING_VERSION } from './server.js';
import { DEFAULT_STORE_LIMITS, type ChannelLimits } from './store/limits.js';
import { friendlyBytes } from './store/log.js';

function duration(ms: number): string {
  if (ms === 0) return 'unlimited';
  const parts: string[] = [];
  let rest = ms;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  if (h > 0) parts.push(`${h}h`);
  if (h > 0 || m > 0) parts.push(`${m}m`);
  parts.push(`${rest / 1000}s`);
  return parts.join('');
}

function count(n: number): string {
  return n === 0 ? 'unlimited' : String(n);
}

function line(label: string, value: string, isDefault: boolean): string {
  return `${label}${value.padStart(14)}${isDefault ? ' *' : ''}`;
}

function channelLines(l: ChannelLimits, indent: string): string[] {
  const d = DEFAULT_STORE_LIMITS;
  return [
    line(
      `${indent}Subscriptions:`,
      count(l.maxSubscriptions),
      l.maxSubscriptions === d.maxSubscriptions,
    ),
    line(`${indent}Messages     :`, count(l.maxMsgs), l.maxMsgs === d.maxMsgs),
    line(
      `${indent}Bytes        :`,
      l.maxBytes === 0 ? 'unlimited' : friendlyBytes(l.maxBytes),
      l.maxBytes === d.maxBytes,
    ),
    line(`${indent}Age          :`, duration(l.maxAge), l.maxAge === d.maxAge),
    line(`${indent}Inactivity   :`, duration(l.maxInactivity), l.maxInactivity === d.maxInactivity),
  ];
}

export function logStartup(s: StreamingServer): void {
  const log = (t: string): void => {
    s.logger.info(`STAN: ${t}`);
  };
  const limits = s.store.limits;
  const g = limits.global;
  log(`Starting nats-streaming-server[${s.clusterId}] version ${STREAMING_VERSION} (wirebus)`);
  log(`ServerID: ${s.serverId}`);
  log(`Go version: ${process.version}`);
  log('Git commit: [not set]');
  log(`NATS connection: ${s.bus.description}`);
  log(`Message store is ${s.store.type}`);
  log('---------- Store Limits ----------');
  log(
    line(
      'Channels:        ',
      count(g.maxChannels),
      g.maxChannels === DEFAULT_STORE_LIMITS.maxChannels,
    ),
  );
  log('--------- Channels Limits --------');
  for (const l of channelLines(g, '  ')) log(l);
  if (limits.perChannel.size > 0) {
    log('--------- List of Channels -------');
    for (const [name, l] of limits.perChannel) {
      log(name);
      for (const t of channelLines(l, ' |-> ')) log(t);
    }
  }
  log('----------------------------------');
  log('Streaming Server is ready');
}
