// The security layer: built from SecurityOptions, plugged into Server.security. It
// takes over each new connection (nonce, TLS, no_auth_user), checks CONNECT the way
// the reference's processClientOrLeafAuthentication does, and binds the client to
// its user, account and permissions.
//
// Building one changes nothing: the accounts it needs (existing ones reused by
// name, so their subscriptions stay) and their export/import routes are staged, and
// install() puts them in place. A config reload (reload.ts) builds the new layer
// first, so that a configuration it refuses leaves the running one untouched.

import { BlockList, isIPv6, Socket } from 'node:net';
import { CloseReason, ErrText } from '../protocol/errors.js';
import { Account } from '../server/account.js';
import type { Client, ConnectOptions } from '../server/client.js';
import { newNonce } from '../server/identity.js';
import type { SecurityHooks, Server } from '../server/server.js';
import {
  type ExportConfig,
  type ImportConfig,
  installLinks,
  linkAccounts,
  type Links,
} from './accounts.js';
import { BcryptCache, isBcrypt } from './bcrypt-cache.js';
import { SecurityConfigError } from './errors.js';
import {
  decodeJwt,
  type Claims,
  signingKeys,
  type SigningKey,
  stringList,
  userPermissions,
} from './jwt.js';
import { verifySignature } from './nkeys.js';
import type { SecurityOptions } from './options.js';
import { ClientPermissions, type CompiledPermissions } from './permissions.js';
import { watchSecurity } from './reload.js';
import { TlsLayer } from './tls.js';
import { checkSecret, compilePermissions, type UserRecord, UserTable } from './users.js';

export { SecurityConfigError } from './errors.js';

/** setTimeout's longest delay; later expiries are re-armed in steps. */
const MAX_TIMER = 2 ** 31 - 1;

interface JwtAccount {
  readonly account: Account;
  readonly claims: Claims;
  readonly signingKeys: readonly SigningKey[];
  /** User public key (or `*`) to the time (s) before which its JWTs are revoked. */
  readonly revocations: ReadonlyMap<string, number>;
  readonly disallowBearer: boolean;
}

export class Security implements SecurityHooks {
  readonly server: Server;
  readonly users = new UserTable();
  readonly bcrypt: BcryptCache;
  readonly tls: TlsLayer | null;
  private readonly token: string;
  private readonly user: string;
  private readonly password: string;
  readonly noAuthUser: UserRecord | null;
  /** Trusted operator keys; non-empty in operator (JWT) mode. */
  private readonly trusted = new Set<string>();
  private readonly jwtAccounts = new Map<string, JwtAccount>();
  /** Any credential check configured (otherwise only TLS is). */
  readonly authConfigured: boolean;
  private readonly needNonce: boolean;
  private readonly expiry = new Map<Client, NodeJS.Timeout>();
  /** Every account of this configuration, $G included, by name; see install(). */
  readonly accounts = new Map<string, Account>();
  /** Export and import routes, put in place by install(). */
  private readonly links = new Map<Account, Links>();
  /** Warnings for the log, written by install(). */
  private readonly warnings: string[] = [];
  /** Plain-text passwords or tokens are configured (the reference warns at start). */
  readonly plaintext: boolean;
  /** Replaced by a reload: a check still under way defers to the rules now in force. */
  private retired = false;

  /**
   * `bcrypt`: the verdict cache of the layer this one replaces, so that a reload
   * does not run every bcrypt compare again.
   */
  constructor(server: Server, o: SecurityOptions, bcrypt?: BcryptCache) {
    this.server = server;
    this.bcrypt = bcrypt ?? new BcryptCache();
    this.token = o.token ?? '';
    this.user = o.user ?? '';
    this.password = o.password ?? '';
    this.accounts.set(server.globalAccount.name, server.globalAccount);
    const accountsConfig = o.accounts ?? {};
    const exports = new Map<string, readonly ExportConfig[]>();
    const imports = new Map<string, readonly ImportConfig[]>();
    for (const [name, a] of Object.entries(accountsConfig)) {
      if (name === '$G' || name === '$SYS') {
        throw new SecurityConfigError(`${JSON.stringify(name)} is a Reserved Account`, 'accounts');
      }
      this.account(name);
      if (a.exports !== undefined) exports.set(name, a.exports);
      if (a.imports !== undefined) imports.set(name, a.imports);
    }
    const seen = new Set<string>();
    const addUser = (u: NonNullable<SecurityOptions['users']>[number], account: string): void => {
      const id = (u.nkey ?? '') !== '' ? u.nkey! : (u.user ?? '');
      const section = account === '' ? 'authorization' : 'accounts';
      if (id === '') throw new SecurityConfigError('User entry requires a user', section);
      if (seen.has(id)) {
        throw new SecurityConfigError(
          `Duplicate ${(u.nkey ?? '') !== '' ? 'nkey' : 'user'} ${JSON.stringify(id)} detected`,
          section,
        );
      }
      seen.add(id);
      const acc = account === '' ? server.globalAccount : this.accounts.get(account);
      if (acc === undefined)
        throw new SecurityConfigError(`account ${JSON.stringify(account)} not defined`, section);
      this.users.add(u, acc);
    };
    for (const u of o.users ?? []) addUser(u, u.account ?? '');
    for (const [name, a] of Object.entries(accountsConfig)) {
      for (const u of a.users ?? []) addUser(u, name);
    }
    if (this.users.size > 0 && this.user !== '') {
      throw new SecurityConfigError(
        'Can not have a single user/pass and a users array',
        'authorization',
      );
    }
    if (this.users.size > 0 && this.token !== '') {
      throw new SecurityConfigError('Can not have a token and a users array', 'authorization');
    }
    try {
      linkAccounts(this.accounts, exports, imports, this.links);
    } catch (err) {
      throw new SecurityConfigError((err as Error).message, 'accounts');
    }
    this.loadOperators(o);
    const noAuth = o.noAuthUser ?? '';
    this.noAuthUser = null;
    if (noAuth !== '') {
      const rec = this.users.byName.get(noAuth);
      if (rec === undefined) {
        throw new SecurityConfigError(
          `no_auth_user: ${JSON.stringify(noAuth)} not present as user or nkey in authorization block or account configuration`,
          'no_auth_user',
        );
      }
      this.noAuthUser = rec;
    }
    this.tls = o.tls !== undefined && o.tls !== null ? new TlsLayer(o.tls) : null;
    this.authConfigured =
      this.token !== '' || this.user !== '' || this.users.size > 0 || this.trusted.size > 0;
    this.needNonce = this.users.byNkey.size > 0 || this.trusted.size > 0;
    this.plaintext =
      (this.token !== '' && !isBcrypt(this.token)) ||
      (this.password !== '' && !isBcrypt(this.password)) ||
      [...this.users.byName.values()].some((u) => u.password !== '' && !isBcrypt(u.password));
  }

  /** The account named `name`: the running one when there is one, so its subscriptions stay. */
  private account(name: string): Account {
    let a = this.accounts.get(name) ?? this.server.accounts.get(name);
    a ??= new Account(name, { sublistCache: !this.server.options.disableSublistCache });
    this.accounts.set(name, a);
    return a;
  }

  /**
   * Puts this configuration in place: the server's accounts become this one's (an
   * account no longer configured goes, as in the reference's reloadAuthorization),
   * with their routes, and new connections meet this layer.
   */
  install(): void {
    const server = this.server;
    for (const name of [...server.accounts.keys()]) {
      if (!this.accounts.has(name)) server.accounts.delete(name);
    }
    for (const [name, a] of this.accounts) server.accounts.set(name, a);
    installLinks(this.accounts.values(), this.links);
    server.security = this;
    // no_auth_user drops auth_required from INFO and lets ops come before CONNECT.
    server.authRequired = this.authConfigured && this.noAuthUser === null;
    for (const w of this.warnings) server.logger.warn(w);
  }

  /** A reload replaced this layer: its expiry timers stop, checks under way defer. */
  retire(): void {
    this.retired = true;
    for (const t of this.expiry.values()) clearTimeout(t);
    this.expiry.clear();
  }

  /** Operator (JWT) mode: only user JWTs authenticate. */
  get operatorMode(): boolean {
    return this.trusted.size > 0;
  }

  // ---- operator mode -------------------------------------------------------------

  private loadOperators(o: SecurityOptions): void {
    for (const text of o.operators ?? []) {
      const claims = decodeJwt(text, 'operator');
      if (typeof claims === 'string') {
        throw new SecurityConfigError(`error parsing operator JWT: ${claims}`, 'operator');
      }
      this.trusted.add(claims.sub);
      for (const k of signingKeys(claims.nats.signing_keys)) this.trusted.add(k.key);
    }
    for (const k of o.trustedKeys ?? []) this.trusted.add(k);
    const preload = o.resolverPreload ?? {};
    if (Object.keys(preload).length > 0 && this.trusted.size === 0) {
      throw new SecurityConfigError(
        'resolver_preload requires an operator (trusted keys)',
        'resolver_preload',
      );
    }
    const exports = new Map<string, ExportConfig[]>();
    const imports = new Map<string, ImportConfig[]>();
    for (const [pk, text] of Object.entries(preload)) {
      const claims = decodeJwt(text, 'account');
      if (typeof claims === 'string') {
        // Expired or otherwise unusable: its users cannot connect, as the reference.
        this.warnings.push(`Account ${pk}: ${claims}`);
        continue;
      }
      if (claims.sub !== pk)
        throw new SecurityConfigError(
          `resolver_preload: JWT subject is not ${pk}`,
          'resolver_preload',
        );
      if (!this.trusted.has(claims.iss)) {
        this.warnings.push(`Account ${pk} JWT not signed by a trusted operator`);
        continue;
      }
      const account = this.account(pk);
      const revocations = new Map<string, number>();
      const rv = claims.nats.revocations;
      if (typeof rv === 'object' && rv !== null) {
        for (const [k, v] of Object.entries(rv as Record<string, unknown>)) {
          if (typeof v === 'number') revocations.set(k, v);
        }
      }
      this.jwtAccounts.set(pk, {
        account,
        claims,
        signingKeys: signingKeys(claims.nats.signing_keys),
        revocations,
        disallowBearer:
          (claims.nats.limits as Record<string, unknown> | undefined)?.disallow_bearer === true,
      });
      exports.set(pk, jwtExports(claims.nats.exports));
      imports.set(pk, jwtImports(claims.nats.imports));
    }
    // Imports naming accounts we do not have are dropped with a warning, not fatal.
    for (const [pk, list] of imports) {
      imports.set(
        pk,
        list.filter((i) => {
          if (this.jwtAccounts.has(i.account)) return true;
          this.warnings.push(`Account ${pk}: import from unknown account ${i.account}`);
          return false;
        }),
      );
    }
    try {
      linkAccounts(this.accounts, exports, imports, this.links);
    } catch (err) {
      this.warnings.push(`Account JWT imports: ${(err as Error).message}`);
    }
  }

  // ---- SecurityHooks ------------------------------------------------------------------

  begin(c: Client): void {
    if (this.needNonce) c.nonce = newNonce();
    // With no_auth_user, ops before any CONNECT run as that user.
    if (this.noAuthUser !== null) this.bind(c, this.noAuthUser);
    const info = this.server.infoFor(c);
    const socket = c.socket;
    // A WebSocket client's TLS, if any, was its listener's: the client port's does not apply.
    if (this.tls === null || !(socket instanceof Socket)) {
      c.begin(info);
      return;
    }
    this.tls.begin(c, socket, info, () => {
      c.begin(null);
    });
  }

  get tlsConfigured(): boolean {
    return this.tls !== null;
  }

  tlsInfo(info: Record<string, unknown>): void {
    if (this.tls !== null) this.tls.info(info);
  }

  authenticate(c: Client, o: ConnectOptions): boolean | Promise<boolean> {
    if (!this.authConfigured) return true;
    if (this.trusted.size > 0) return this.authenticateJwt(c, o);
    const users = this.users;
    if (users.byNkey.size > 0 && o.nkey !== '') {
      const rec = users.byNkey.get(o.nkey);
      if (rec === undefined) return this.fail(c, `Nkey ${JSON.stringify(o.nkey)} not found`);
      if (o.sig === '') return this.fail(c, 'Signature missing');
      if (!verifySignature(c.nonce, o.sig, o.nkey, 'user'))
        return this.fail(c, 'Signature not verified');
      this.bind(c, rec);
      return true;
    }
    if (users.byName.size > 0) {
      if (this.noAuthUser !== null && o.user === '' && o.pass === '' && o.authToken === '') {
        this.bind(c, this.noAuthUser);
        return true;
      }
      if (o.user !== '') {
        const rec = users.byName.get(o.user);
        if (rec === undefined) return this.fail(c, `User ${JSON.stringify(o.user)} not found`);
        return this.after(checkSecret(rec.password, o.pass, this.bcrypt), c, o, rec);
      }
    }
    if (this.token !== '')
      return this.after(checkSecret(this.token, o.authToken, this.bcrypt), c, o, null);
    if (this.user !== '') {
      if (o.user !== this.user) return this.fail(c, `User ${JSON.stringify(o.user)} not found`);
      return this.after(checkSecret(this.password, o.pass, this.bcrypt), c, o, null, this.user);
    }
    return false;
  }

  clientClosed(c: Client): void {
    const t = this.expiry.get(c);
    if (t !== undefined) {
      clearTimeout(t);
      this.expiry.delete(c);
    }
  }

  // ---- helpers ------------------------------------------------------------------------

  private fail(c: Client, why: string): false {
    if (this.server.logger.debugEnabled) this.server.logger.debug(`${c.label()} - ${why}`);
    return false;
  }

  /**
   * Binds the user once a (possibly asynchronous) secret check passed. A bcrypt
   * check that ends after a reload replaced this layer is answered by the layer in
   * force instead, so nobody gets in, or keeps permissions, under rules that are gone.
   */
  private after(
    verdict: boolean | Promise<boolean>,
    c: Client,
    o: ConnectOptions,
    rec: UserRecord | null,
    name = '',
  ): boolean | Promise<boolean> {
    const done = (ok: boolean): boolean | Promise<boolean> => {
      if (this.retired) return this.server.authenticate(c, o);
      if (!ok) return this.fail(c, 'password or token mismatch');
      if (rec !== null) this.bind(c, rec);
      else this.bindPlain(c, name);
      return true;
    };
    return typeof verdict === 'boolean' ? done(verdict) : verdict.then(done);
  }

  /**
   * Binds c to a configured user by name, as another listener's no_auth_user does
   * (the websocket block's); false when no such user exists.
   */
  bindUserNamed(c: Client, name: string): boolean {
    const rec = this.users.byName.get(name);
    if (rec === undefined) return false;
    this.bind(c, rec);
    return true;
  }

  /** Users or nkeys are configured (they take precedence over a listener's own credentials). */
  get hasUsers(): boolean {
    return this.users.size > 0 || this.trusted.size > 0;
  }

  /** A user of the global account without permissions (token, --user/--pass). */
  private bindPlain(c: Client, name: string): void {
    c.user = name;
    moveToAccount(c, this.server.globalAccount);
    setPermissions(c, null);
  }

  private bind(c: Client, rec: UserRecord): void {
    c.user = rec.name;
    moveToAccount(c, rec.account);
    setPermissions(c, rec.permissions);
  }

  private authenticateJwt(c: Client, o: ConnectOptions): boolean {
    if (o.jwt === '') return this.fail(c, 'Authentication requires a user JWT');
    const claims = decodeJwt(o.jwt, 'user');
    if (typeof claims === 'string') return this.fail(c, `User JWT not valid: ${claims}`);
    const issuerAccount = claims.nats.issuer_account;
    const issuer =
      typeof issuerAccount === 'string' && issuerAccount !== '' ? issuerAccount : claims.iss;
    const acc = this.jwtAccounts.get(issuer);
    if (acc === undefined) return this.fail(c, 'Account JWT lookup error: account not found');
    if (!this.trusted.has(acc.claims.iss))
      return this.fail(c, 'Account JWT not signed by trusted operator');
    let template: CompiledPermissions | null | undefined;
    if (claims.iss !== acc.claims.sub) {
      const key = acc.signingKeys.find((k) => k.key === claims.iss);
      if (key === undefined) return this.fail(c, 'User JWT issuer is not known');
      // A scoped signing key's template replaces the user's own permissions.
      if (key.template !== null) template = compilePermissions(key.template);
    }
    const now = Date.now();
    if (acc.claims.exp > 0 && acc.claims.exp * 1000 <= now)
      return this.fail(c, 'Account JWT has expired');
    const bearer = claims.nats.bearer_token === true;
    if (bearer && acc.disallowBearer) return this.fail(c, 'Account does not allow bearer token');
    if (!bearer) {
      if (o.sig === '') return this.fail(c, 'Signature missing');
      if (!verifySignature(c.nonce, o.sig, claims.sub, 'user'))
        return this.fail(c, 'Signature not verified');
    }
    const revokedBefore = acc.revocations.get(claims.sub) ?? acc.revocations.get('*');
    if (revokedBefore !== undefined && revokedBefore >= claims.iat) {
      return this.fail(c, 'User authentication revoked');
    }
    const src = stringList(claims.nats.src);
    if (src.length > 0 && !sourceAllowed(src, c.ip)) return this.fail(c, `Bad src Ip ${c.ip}`);
    const types = stringList(claims.nats.allowed_connection_types);
    if (types.length > 0 && !types.includes('STANDARD'))
      return this.fail(c, 'Connection type not allowed');
    const perms =
      template !== undefined ? template : compilePermissions(userPermissions(claims.nats));
    this.bind(c, {
      name: claims.sub,
      password: '',
      nkey: claims.sub,
      account: acc.account,
      permissions: perms,
    });
    this.setExpiry(c, claims.exp, acc.claims.exp);
    return true;
  }

  /** Closes the client when its user JWT (or its account JWT) expires. */
  private setExpiry(c: Client, userExp: number, accountExp: number): void {
    this.clientClosed(c);
    const at = (e: number): number => (e > 0 ? e * 1000 : Infinity);
    const when = Math.min(at(userExp), at(accountExp));
    if (when === Infinity) return;
    const text = at(userExp) <= at(accountExp) ? ErrText.userExpired : ErrText.accountExpired;
    const arm = (): void => {
      const left = when - Date.now();
      const t = setTimeout(
        () => {
          if (Date.now() < when) {
            arm();
            return;
          }
          this.expiry.delete(c);
          if (!c.closed) c.close(CloseReason.authExpired, text);
        },
        Math.max(0, Math.min(left, MAX_TIMER)),
      );
      t.unref();
      this.expiry.set(c, t);
    };
    arm();
  }
}

/**
 * Moves a client (and any subscriptions it already has) to another account; their
 * interest for the other servers and their stream import shadows move with them.
 */
function moveToAccount(c: Client, account: Account): void {
  if (c.account === account) return;
  const server = c.server;
  for (const sub of c.subs.values()) {
    server.subscriptionRemoved(sub);
    c.account.sublist.remove(sub);
  }
  c.account = account;
  for (const sub of c.subs.values()) {
    account.sublist.insert(sub);
    server.subscriptionAdded(sub);
  }
}

function setPermissions(c: Client, p: CompiledPermissions | null): void {
  c.perms = p === null ? null : new ClientPermissions(p);
  for (const sub of c.subs.values())
    sub.filter = c.perms === null ? null : c.perms.deliveryFilter(sub.subject);
}

function sourceAllowed(src: readonly string[], ip: string): boolean {
  const list = new BlockList();
  const type = isIPv6(ip) ? 'ipv6' : 'ipv4';
  for (const entry of src) {
    const [net, bits] = entry.split('/');
    if (net === undefined || net === '') continue;
    try {
      const t = isIPv6(net) ? 'ipv6' : 'ipv4';
      if (bits === undefined) list.addAddress(net, t);
      else list.addSubnet(net, Number(bits), t);
    } catch {
      // An entry that is not an address or CIDR allows nothing.
    }
  }
  try {
    return list.check(ip, type);
  } catch {
    return false;
  }
}

function jwtExports(v: unknown): ExportConfig[] {
  if (!Array.isArray(v)) return [];
  const out: ExportConfig[] = [];
  for (const item of v) {
    if (typeof item !== 'object' || item === null) continue;
    const e = item as Record<string, unknown>;
    if (typeof e.subject !== 'string' || (e.type !== 'stream' && e.type !== 'service')) continue;
    // Exports that require an activation token are not importable here (no tokens yet).
    if (e.token_req === true) continue;
    const rt = typeof e.response_type === 'string' ? e.response_type.toLowerCase() : 'singleton';
    out.push({
      kind: e.type,
      subject: e.subject,
      accounts: null,
      responseType: rt === 'stream' ? 'stream' : rt === 'chunked' ? 'chunked' : 'singleton',
    });
  }
  return out;
}

function jwtImports(v: unknown): ImportConfig[] {
  if (!Array.isArray(v)) return [];
  const out: ImportConfig[] = [];
  for (const item of v) {
    if (typeof item !== 'object' || item === null) continue;
    const i = item as Record<string, unknown>;
    if (typeof i.subject !== 'string' || typeof i.account !== 'string') continue;
    if (i.type !== 'stream' && i.type !== 'service') continue;
    const local =
      typeof i.local_subject === 'string' && i.local_subject !== ''
        ? i.local_subject
        : typeof i.to === 'string'
          ? i.to
          : '';
    out.push({ kind: i.type, account: i.account, subject: i.subject, to: local });
  }
  return out;
}

/**
 * Builds the security layer and plugs it into the server; call before start(). A
 * config reload (or reloadSecurity) may replace it later.
 */
export function attachSecurity(server: Server, options: SecurityOptions): Security {
  const s = new Security(server, options);
  s.install();
  if (s.plaintext) server.logger.warn('Plaintext passwords detected, use nkeys or bcrypt');
  watchSecurity(server, s, options);
  return s;
}
