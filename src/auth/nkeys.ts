// NKEY signatures. INFO carries a fresh nonce per connection; the client signs the
// nonce's ASCII bytes with its Ed25519 seed and sends the signature (base64url,
// standard base64 accepted too, as the reference) with its public key or JWT.
// @nats-io/nkeys decodes and CRC-checks the public key; node:crypto verifies.

import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { Prefix } from '@nats-io/nkeys';
import type { Codec } from '@nats-io/nkeys/lib/codec.js';
import { onFirstUse, requireModule } from './lazy-module.js';

/** @nats-io/nkeys (and its Ed25519 code), loaded on the first key to decode. */
const nkeysPrefix = onFirstUse(() => requireModule('@nats-io/nkeys') as { Prefix: typeof Prefix });
const nkeysCodec = onFirstUse(
  () => requireModule('@nats-io/nkeys/lib/codec.js') as { Codec: typeof Codec },
);

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow. */
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

export type KeyKind = 'user' | 'account' | 'operator';

/** The nkeys prefix of each kind, by its name in nkeys' Prefix. */
const PREFIX: Record<KeyKind, keyof typeof Prefix> = {
  user: 'User',
  account: 'Account',
  operator: 'Operator',
};

/** Decoded public keys, so a busy account's key is parsed once. */
const keys = new Map<string, KeyObject | null>();
const KEYS_MAX = 4096;

/** The public key of the given kind as a node:crypto key, or null when it is not one. */
export function publicKey(text: string, kind: KeyKind): KeyObject | null {
  const id = kind + ':' + text;
  const cached = keys.get(id);
  if (cached !== undefined) return cached;
  let key: KeyObject | null = null;
  if (text.length === 56) {
    try {
      const prefix = nkeysPrefix().Prefix[PREFIX[kind]];
      const raw = nkeysCodec().Codec.decode(prefix, new TextEncoder().encode(text));
      key = createPublicKey({
        key: Buffer.concat([ED25519_SPKI, raw]),
        format: 'der',
        type: 'spki',
      });
    } catch {
      key = null;
    }
  }
  if (keys.size >= KEYS_MAX) keys.clear();
  keys.set(id, key);
  return key;
}

export function isPublicKey(text: string, kind: KeyKind): boolean {
  return publicKey(text, kind) !== null;
}

/** The signature bytes of CONNECT's `sig`: base64url without padding, or standard base64. */
export function decodeSignature(sig: string): Buffer | null {
  if (/^[A-Za-z0-9_-]+$/.test(sig)) return Buffer.from(sig, 'base64url');
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(sig)) return Buffer.from(sig, 'base64');
  return null;
}

/** True when sig is pub's Ed25519 signature of data. */
export function verifySignature(
  data: Buffer | string,
  sig: Buffer | string,
  pub: string,
  kind: KeyKind,
): boolean {
  const key = publicKey(pub, kind);
  if (key === null) return false;
  const signature = typeof sig === 'string' ? decodeSignature(sig) : sig;
  if (signature?.length !== 64) return false;
  try {
    return verify(
      null,
      typeof data === 'string' ? Buffer.from(data, 'latin1') : data,
      key,
      signature,
    );
  } catch {
    return false;
  }
}
