// Store limits: fields, defaults, validation and per-channel inheritance, with the
// meaning of 0 and negative values of the reference server (stores.StoreLimits.Build).
//
// - Global limits: 0 means unlimited; a negative value is a startup error.
// - Per-channel overrides: 0 (or absent) inherits from the parent, a negative value
//   means unlimited and is stored as 0. (A config file's `0` means unlimited: its
//   parser turns it into -1 before it gets here.) Names may hold wildcards; a channel
//   inherits global -> `foo.>` -> `foo.*` -> `foo.bar`, and gets the limits of the most
//   specific pattern that matches it, or the global ones.
// - Limits apply when a channel is created.
//
// Durations are milliseconds here (Node timers are millisecond-grained); monitoring
// shows them in nanoseconds, as Go's time.Duration (see storezLimits).
import { isChannelNameLiteral, isChannelNameValid } from '../channel-name.js';
import { StoreError } from './errors.js';
import { ChannelPatternIndex } from './limits-index.js';

export interface ChannelLimits {
  /** Messages kept per channel; past it the oldest are dropped. */
  readonly maxMsgs: number;
  /** Bytes kept per channel (as the store type counts them); past it the oldest go. */
  readonly maxBytes: number;
  /** Milliseconds a message is kept. */
  readonly maxAge: number;
  /** Subscriptions per channel, offline durables included. */
  readonly maxSubscriptions: number;
  /** Milliseconds without a publish nor an active subscription before the channel may go. */
  readonly maxInactivity: number;
}

export interface StoreLimits extends ChannelLimits {
  readonly maxChannels: number;
}

/** A per-channel override: absent or 0 inherits, negative means unlimited. */
export type ChannelLimitsOverride = Partial<ChannelLimits>;

/** What a store is configured with: absent global fields take DEFAULT_STORE_LIMITS. */
export interface StoreLimitsConfig extends Partial<StoreLimits> {
  readonly perChannel?: Readonly<Record<string, ChannelLimitsOverride>>;
}

/** stores.DefaultStoreLimits. max_bytes is 1000000 × 1024 ("976.56 MB"), not 1 GiB. */
export const DEFAULT_STORE_LIMITS: StoreLimits = Object.freeze({
  maxChannels: 100,
  maxMsgs: 1_000_000,
  maxBytes: 1_000_000 * 1024,
  maxAge: 0,
  maxSubscriptions: 1000,
  maxInactivity: 0,
});

const CHANNEL_FIELDS = [
  'maxMsgs',
  'maxBytes',
  'maxAge',
  'maxSubscriptions',
  'maxInactivity',
] as const satisfies readonly (keyof ChannelLimits)[];

/** Limits after validation and inheritance: every value is final, 0 = unlimited. */
export class ResolvedLimits {
  private readonly index = new ChannelPatternIndex<ChannelLimits>();
  /** The global limits without max_channels: what a channel with no pattern gets. */
  private readonly globalChannel: ChannelLimits;

  private constructor(
    readonly global: StoreLimits,
    /** Per-channel limits after inheritance, in the order they were given. */
    readonly perChannel: ReadonlyMap<string, ChannelLimits>,
  ) {
    for (const [name, limits] of perChannel) this.index.insert(name, limits);
    const { maxMsgs, maxBytes, maxAge, maxSubscriptions, maxInactivity } = global;
    this.globalChannel = Object.freeze({
      maxMsgs,
      maxBytes,
      maxAge,
      maxSubscriptions,
      maxInactivity,
    });
  }

  /** Validates `config` and applies inheritance; throws StoreError('INVALID_LIMITS'). */
  static build(config: StoreLimitsConfig = {}): ResolvedLimits {
    const global: StoreLimits = {
      maxChannels: config.maxChannels ?? DEFAULT_STORE_LIMITS.maxChannels,
      maxMsgs: config.maxMsgs ?? DEFAULT_STORE_LIMITS.maxMsgs,
      maxBytes: config.maxBytes ?? DEFAULT_STORE_LIMITS.maxBytes,
      maxAge: config.maxAge ?? DEFAULT_STORE_LIMITS.maxAge,
      maxSubscriptions: config.maxSubscriptions ?? DEFAULT_STORE_LIMITS.maxSubscriptions,
      maxInactivity: config.maxInactivity ?? DEFAULT_STORE_LIMITS.maxInactivity,
    };
    checkGlobal(global);
    const entries = Object.entries(config.perChannel ?? {});
    let literals = 0;
    for (const [name, override] of entries) {
      if (!isChannelNameValid(name, true)) fail(`invalid channel name "${name}"`);
      if (isChannelNameLiteral(name)) {
        literals++;
        if (global.maxChannels > 0 && literals > global.maxChannels) {
          fail(
            `too many channels defined (${literals}). The max channels limit is set to ${global.maxChannels}`,
          );
        }
      }
      for (const field of CHANNEL_FIELDS) {
        const v = override[field];
        if (v !== undefined && !Number.isSafeInteger(v)) {
          fail(`invalid ${field} limit for channel "${name}" (${v})`);
        }
      }
    }
    return new ResolvedLimits(Object.freeze(global), inherit(global, entries));
  }

  /** What a store's options may give: limits as configured (validated here), or resolved. */
  static from(limits: StoreLimitsConfig | ResolvedLimits | undefined): ResolvedLimits {
    return limits instanceof ResolvedLimits ? limits : ResolvedLimits.build(limits);
  }

  /** The limits a channel named `name` (a literal) gets when it is created. */
  forChannel(name: string): ChannelLimits {
    const matches = this.index.match(name);
    return matches.length === 0 ? this.globalChannel : matches[matches.length - 1]!;
  }
}

function fail(message: string): never {
  throw new StoreError('INVALID_LIMITS', message);
}

// The reference checks in this order, with these texts (durations print as Go's).
function checkGlobal(l: StoreLimits): void {
  const checks: [number, string, (v: number) => string][] = [
    [l.maxChannels, 'max channels', String],
    [l.maxSubscriptions, 'max subscriptions', String],
    [l.maxMsgs, 'max messages', String],
    [l.maxBytes, 'max bytes', String],
    [l.maxAge, 'max age', goDuration],
    [l.maxInactivity, 'max inactivity', goDuration],
  ];
  for (const [value, what, show] of checks) {
    if (!Number.isSafeInteger(value)) fail(`${what} limit must be an integer (${value})`);
    if (value < 0) fail(`${what} limit cannot be negative (${show(value)})`);
  }
}

// StoreLimits.applyInheritance: walk the patterns widest first; each pattern not yet
// resolved inherits from the one before it in its own match list (the first from the
// global limits).
function inherit(
  global: StoreLimits,
  entries: [string, ChannelLimitsOverride][],
): Map<string, ChannelLimits> {
  interface Entry {
    readonly literal: boolean;
    limits: ChannelLimits;
    done: boolean;
  }
  const index = new ChannelPatternIndex<Entry>();
  const byName = new Map<string, Entry>();
  for (const [name, override] of entries) {
    const entry: Entry = {
      literal: isChannelNameLiteral(name),
      limits: zeroFilled(override),
      done: false,
    };
    byName.set(name, entry);
    index.insert(name, entry);
  }
  const pick = (own: number, parent: number): number => (own < 0 ? 0 : own === 0 ? parent : own);
  const resolve = (entry: Entry, parent: ChannelLimits): void => {
    const own = entry.limits;
    entry.limits = Object.freeze({
      maxMsgs: pick(own.maxMsgs, parent.maxMsgs),
      maxBytes: pick(own.maxBytes, parent.maxBytes),
      maxAge: pick(own.maxAge, parent.maxAge),
      maxSubscriptions: pick(own.maxSubscriptions, parent.maxSubscriptions),
      maxInactivity: pick(own.maxInactivity, parent.maxInactivity),
    });
    entry.done = true;
  };
  for (const pattern of index.patterns()) {
    const chain = index.match(pattern);
    let prev = chain[0]!;
    if (prev.literal && prev.done) continue;
    if (!prev.done) resolve(prev, global);
    for (let i = 1; i < chain.length; i++) {
      const entry = chain[i]!;
      if (!entry.done) resolve(entry, prev.limits);
      prev = entry;
    }
  }
  return new Map([...byName].map(([name, e]) => [name, e.limits]));
}

function zeroFilled(o: ChannelLimitsOverride): ChannelLimits {
  return {
    maxMsgs: o.maxMsgs ?? 0,
    maxBytes: o.maxBytes ?? 0,
    maxAge: o.maxAge ?? 0,
    maxSubscriptions: o.maxSubscriptions ?? 0,
    maxInactivity: o.maxInactivity ?? 0,
  };
}

/** Milliseconds as Go prints a time.Duration ("1h0m0s", "1.5s", "250ms", "-1s"). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = (rest / 1000).toString();
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}
