// bcrypt checks off the event loop, with a short-lived cache of verdicts. A bcrypt
// compare costs tens to hundreds of milliseconds of CPU by design; the `bcrypt`
// package runs it in libuv's thread pool, so other connections keep flowing while
// one authenticates. A reconnect storm of clients with the same credentials then
// costs one compare per (hash, password) pair per CACHE_TTL, not one per client, and
// concurrent checks of the same pair share one compare.
//
// Cache keys are HMACs under a key drawn at start, so no password, nor a fast
// unsalted hash of one, is kept in memory.

import { createHmac, randomBytes } from 'node:crypto';
import { onFirstUse, requireModule } from './lazy-module.js';

/** The native bcrypt module, loaded on the first compare. */
const bcrypt = onFirstUse(() => requireModule('bcrypt') as typeof import('bcrypt'));

/** How long a verdict is reused. */
const CACHE_TTL = 60_000;
/** Verdicts kept at most; the oldest go first. */
const CACHE_MAX = 1024;

/** The reference's test for a bcrypt hash: `^\$2[abxy]\$\d{2}\$.*`. */
const BCRYPT = /^\$2[abxy]\$\d{2}\$/;

export function isBcrypt(text: string): boolean {
  return BCRYPT.test(text);
}

interface Verdict {
  ok: boolean;
  expires: number;
}

export class BcryptCache {
  private readonly key = randomBytes(32);
  private readonly verdicts = new Map<string, Verdict>();
  private readonly inFlight = new Map<string, Promise<boolean>>();
  /** Compares actually run, for tests. */
  compares = 0;

  /** Resolves true when password matches the bcrypt hash; never rejects. */
  compare(password: string, hash: string): Promise<boolean> | boolean {
    const key = createHmac('sha256', this.key)
      .update(hash)
      .update('\0')
      .update(password)
      .digest('base64');
    const now = Date.now();
    const cached = this.verdicts.get(key);
    if (cached !== undefined) {
      if (cached.expires > now) return cached.ok;
      this.verdicts.delete(key);
    }
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    this.compares++;
    // The reference (Go's bcrypt) ignores the minor version letter; the native library
    // knows only $2a$ and $2b$, which hash alike, so $2x$ and $2y$ are read as $2b$.
    const normalized = /^\$2[xy]\$/.test(hash) ? '$2b$' + hash.slice(4) : hash;
    const p = bcrypt()
      .compare(password, normalized)
      .then(
        (ok) => ok,
        () => false,
      );
    const done = p.then((ok) => {
      this.inFlight.delete(key);
      this.verdicts.set(key, { ok, expires: Date.now() + CACHE_TTL });
      if (this.verdicts.size > CACHE_MAX) {
        const oldest = this.verdicts.keys().next();
        if (oldest.done !== true) this.verdicts.delete(oldest.value);
      }
      return ok;
    });
    this.inFlight.set(key, done);
    return done;
  }

  clear(): void {
    this.verdicts.clear();
  }
}
