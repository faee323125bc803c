// NATS JWTs (decentralized auth): decoding, the Ed25519 signature over
// `header.payload`, time validity, and the claims the server acts on. An operator
// JWT names the trusted keys; account JWTs (from the memory resolver) are signed by
// the operator or one of its signing keys; a user JWT is signed by its account or
// one of the account's signing keys, and the client proves it holds the user's seed
// by signing the connection's nonce.
//
// Everything here is untrusted input: each field is checked for type before use,
// and any failure is a message for the debug log (never the token itself).

import { verifySignature, type KeyKind } from './nkeys.js';
import type { PermissionsConfig, SubjectPermission } from './permissions.js';

export type ClaimKind = 'operator' | 'account' | 'user';

export interface Claims {
  /** Issuer public key. */
  readonly iss: string;
  /** Subject: the public key the claims are about. */
  readonly sub: string;
  readonly name: string;
  /** Seconds since epoch; 0 when absent. */
  readonly iat: number;
  readonly exp: number;
  readonly nbf: number;
  readonly type: ClaimKind;
  /** The `nats` object, unchecked below the top level. */
  readonly nats: Record<string, unknown>;
}

/** Longest JWT accepted; real ones are a few kilobytes. */
const MAX_JWT = 64 * 1024;

const ISSUER_KIND: Record<ClaimKind, KeyKind> = {
  operator: 'operator',
  account: 'operator',
  user: 'account',
};

/**
 * Decodes and verifies a JWT of the expected kind: its structure, the signature by
 * its issuer (an operator key for operator and account JWTs, an account key for
 * user JWTs) and its time window. Returns the claims or an error message.
 */
export function decodeJwt(token: string, expected: ClaimKind, now = Date.now()): Claims | string {
  if (token.length > MAX_JWT) return 'JWT too long';
  const parts = token.split('.');
  if (parts.length !== 3) return 'JWT must have three parts';
  const [h, p, s] = parts as [string, string, string];
  const header = parseSegment(h);
  if (header === null) return 'JWT header is not base64url JSON';
  if (typeof header.typ !== 'string' || header.typ.toUpperCase() !== 'JWT')
    return 'JWT header typ is not JWT';
  if (header.alg !== 'ed25519-nkey' && header.alg !== 'ed25519')
    return `JWT algorithm not supported`;
  const body = parseSegment(p);
  if (body === null) return 'JWT payload is not base64url JSON';
  const nats = body.nats;
  if (typeof nats !== 'object' || nats === null || Array.isArray(nats))
    return 'JWT has no nats claims';
  const natsClaims = nats as Record<string, unknown>;
  // Version 2 puts the type in nats.type; version 1 at the top level.
  const type = natsClaims.type ?? body.type;
  if (type !== expected) return `JWT is not a ${expected} JWT`;
  const iss = body.iss;
  const subject = body.sub;
  if (typeof iss !== 'string' || typeof subject !== 'string') return 'JWT lacks iss or sub';
  const num = (v: unknown): number | null =>
    v === undefined || v === null ? 0 : typeof v === 'number' && Number.isFinite(v) ? v : null;
  const iat = num(body.iat);
  const exp = num(body.exp);
  const nbf = num(body.nbf);
  if (iat === null || exp === null || nbf === null) return 'JWT times are not numbers';
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return 'JWT signature is not base64url';
  if (!verifySignature(`${h}.${p}`, Buffer.from(s, 'base64url'), iss, ISSUER_KIND[expected]))
    return 'JWT signature does not verify';
  const seconds = Math.floor(now / 1000);
  if (exp > 0 && exp <= seconds) return 'JWT has expired';
  if (nbf > 0 && nbf > seconds) return 'JWT is not yet valid';
  const name = typeof body.name === 'string' ? body.name : '';
  // Typed apart from the return type, whose `string` member would make `sub` read as String#sub.
  const claims: Claims = {
    iss,
    sub: subject,
    name,
    iat,
    exp,
    nbf,
    type: expected,
    nats: natsClaims,
  };
  return claims;
}

function parseSegment(text: string): Record<string, unknown> | null {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text)) return null;
  try {
    const v: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The first JWT in a text: an operator file may decorate it (nsc's `-----BEGIN` lines). */
export function findJwt(text: string): string | null {
  const m = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/.exec(text);
  return m === null ? null : m[0];
}

// ---- claim fields ------------------------------------------------------------------

export function stringList(v: unknown): string[] {
  if (typeof v === 'string') return v === '' ? [] : v.split(',').map((x) => x.trim());
  if (!Array.isArray(v)) return [];
  return v.filter((x): x is string => typeof x === 'string');
}

/** Signing keys as strings or `{kind: "user_scope", key, template}` objects. */
export interface SigningKey {
  readonly key: string;
  /** Permissions a scoped key imposes on the users it signs; null when not scoped. */
  readonly template: PermissionsConfig | null;
}

export function signingKeys(v: unknown): SigningKey[] {
  if (!Array.isArray(v)) return [];
  const out: SigningKey[] = [];
  for (const item of v) {
    if (typeof item === 'string') out.push({ key: item, template: null });
    else if (typeof item === 'object' && item !== null) {
      const o = item as Record<string, unknown>;
      if (typeof o.key === 'string') {
        out.push({ key: o.key, template: userPermissions(o.template) });
      }
    }
  }
  return out;
}

function subjectPermission(v: unknown): SubjectPermission | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const allow = Array.isArray(o.allow) ? stringList(o.allow) : null;
  const deny = Array.isArray(o.deny) ? stringList(o.deny) : null;
  if ((allow === null || allow.length === 0) && (deny === null || deny.length === 0)) return null;
  return { allow: allow !== null && allow.length > 0 ? allow : null, deny };
}

/** pub/sub/resp of user claims (or a scoped signing key's template) as permissions. */
export function userPermissions(v: unknown): PermissionsConfig | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const publish = subjectPermission(o.pub);
  const subscribe = subjectPermission(o.sub);
  let responses = null;
  if (typeof o.resp === 'object' && o.resp !== null) {
    const r = o.resp as Record<string, unknown>;
    const max = typeof r.max === 'number' && r.max !== 0 ? r.max : 1;
    // ttl is in nanoseconds.
    const ttl = typeof r.ttl === 'number' && r.ttl !== 0 ? r.ttl / 1e6 : 2 * 60 * 1000;
    responses = { max, expires: ttl };
  }
  if (publish === null && subscribe === null && responses === null) return null;
  return { publish, subscribe, responses };
}
