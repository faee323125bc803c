// Tokens, users with passwords and NKEY users: the table a CONNECT is checked
// against, as the reference's authorization block, accounts' users lists and the
// --user/--pass/--auth flags. A configured password or token that looks like a
// bcrypt hash is checked with bcrypt (off the event loop); any other is compared in
// constant time.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { Account } from '../server/account.js';
import { type BcryptCache, isBcrypt } from './bcrypt-cache.js';
import { CompiledPermissions, type PermissionsConfig } from './permissions.js';

/** A user entry as configured: a name with a password, or an NKEY. */
export interface UserConfig {
  readonly user?: string;
  /** Plain text, or a bcrypt hash ($2a$/$2b$...). */
  readonly password?: string;
  /** A public user NKEY (U...), instead of user and password. */
  readonly nkey?: string;
  readonly permissions?: PermissionsConfig | null;
  /** The account's name; absent or empty for the global account $G. */
  readonly account?: string;
}

/** A user the server knows, with its account and compiled permissions. */
export interface UserRecord {
  /** The user name, or the NKEY for NKEY users (what /connz shows). */
  readonly name: string;
  readonly password: string;
  readonly nkey: string;
  readonly account: Account;
  /** Null when the user has no permissions. */
  readonly permissions: CompiledPermissions | null;
}

export function compilePermissions(p: PermissionsConfig | null): CompiledPermissions | null {
  if (p === null) return null;
  const compiled = new CompiledPermissions(p);
  return compiled.empty ? null : compiled;
}

export class UserTable {
  readonly byName = new Map<string, UserRecord>();
  readonly byNkey = new Map<string, UserRecord>();

  add(u: UserConfig, account: Account): void {
    const nkey = u.nkey ?? '';
    const record: UserRecord = {
      name: nkey !== '' ? nkey : (u.user ?? ''),
      password: u.password ?? '',
      nkey,
      account,
      permissions: compilePermissions(u.permissions ?? null),
    };
    if (nkey !== '') this.byNkey.set(nkey, record);
    else this.byName.set(record.name, record);
  }

  get size(): number {
    return this.byName.size + this.byNkey.size;
  }
}

/**
 * The reference's comparePasswords: bcrypt when the configured secret is a bcrypt
 * hash, else constant time. Both sides are hashed first so that neither the
 * comparison nor its early exit on length tells an attacker anything.
 */
export function checkSecret(
  configured: string,
  given: string,
  bcrypt: BcryptCache,
): boolean | Promise<boolean> {
  if (isBcrypt(configured)) {
    // Sending the hash itself must not work; bcrypt.compare sees to that.
    return bcrypt.compare(given, configured);
  }
  const a = createHash('sha256').update(configured).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b) && configured.length === given.length;
}
