// What the security layer is given: the reference's authorization, accounts,
// no_auth_user, operator/resolver and tls settings, in plain objects. The config
// file and the flags (config.ts) produce this; an embedding program may write it
// directly: `startServer({ security: { users: [{ user: 'a', password: 'b' }] } })`.

import type { ExportConfig, ImportConfig } from './accounts.js';
import type { AccountJetStreamSetting } from '../server/account.js';
import type { TlsOptions } from './tls.js';
import type { UserConfig } from './users.js';

export type { ExportConfig, ImportConfig, ResponseType } from './accounts.js';
export type { PermissionsConfig, ResponsePermission, SubjectPermission } from './permissions.js';
export type { TlsOptions } from './tls.js';
export type { UserConfig } from './users.js';

export interface AccountConfig {
  readonly users?: readonly UserConfig[];
  readonly exports?: readonly ExportConfig[];
  readonly imports?: readonly ImportConfig[];
  /**
   * JetStream in this account (`jetstream: enabled`, or limits): when any account sets
   * it, only those accounts have JetStream, as in the reference. -1 is no limit.
   */
  readonly jetstream?: AccountJetStream;
}

export type AccountJetStream = AccountJetStreamSetting;

export interface SecurityOptions {
  /** `--auth` / `authorization { token }`: plain or bcrypt. */
  readonly token?: string;
  /** `--user`/`--pass` / `authorization { user, password }`. */
  readonly user?: string;
  readonly password?: string;
  /** `authorization { users }`; a user naming an account belongs to it. */
  readonly users?: readonly UserConfig[];
  /** `accounts { A: { users, exports, imports } }`. */
  readonly accounts?: Readonly<Record<string, AccountConfig>>;
  /** Clients without credentials (or without CONNECT) are this user. */
  readonly noAuthUser?: string;
  /** Operator JWTs: operator mode (decentralized auth). */
  readonly operators?: readonly string[];
  /** Extra trusted operator public keys. */
  readonly trustedKeys?: readonly string[];
  /** The memory resolver's account JWTs, by account public key. */
  readonly resolverPreload?: Readonly<Record<string, string>>;
  readonly tls?: TlsOptions | null;
}
