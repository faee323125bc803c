// Store limits as /streaming/storez shows them: the reference's JSON field names and
// order, durations in nanoseconds (Go's time.Duration), per-channel limits after
// inheritance with keys sorted (Go marshals maps sorted), `channels` omitted when empty.
import type { ChannelLimits, ResolvedLimits } from './limits.js';

export interface StorezChannelLimits {
  readonly max_msgs: number;
  readonly max_bytes: number;
  readonly max_age: number;
  readonly max_subscriptions: number;
  readonly max_inactivity: number;
}

export interface StorezLimits {
  readonly max_channels: number;
  readonly max_msgs: number;
  readonly max_bytes: number;
  readonly max_age: number;
  readonly max_subscriptions: number;
  readonly max_inactivity: number;
  readonly channels?: Readonly<Record<string, StorezChannelLimits>>;
}

// ms × 1e6 is exact in a double for any duration under ~18 years.
const NS_PER_MS = 1_000_000;

function channelJson(l: ChannelLimits): StorezChannelLimits {
  return {
    max_msgs: l.maxMsgs,
    max_bytes: l.maxBytes,
    max_age: l.maxAge * NS_PER_MS,
    max_subscriptions: l.maxSubscriptions,
    max_inactivity: l.maxInactivity * NS_PER_MS,
  };
}

export function storezLimits(limits: ResolvedLimits): StorezLimits {
  const g = limits.global;
  const base = { max_channels: g.maxChannels, ...channelJson(g) };
  if (limits.perChannel.size === 0) return base;
  const channels: Record<string, StorezChannelLimits> = {};
  for (const name of [...limits.perChannel.keys()].sort()) {
    channels[name] = channelJson(limits.perChannel.get(name)!);
  }
  return { ...base, channels };
}
