// The security layer's part in a config reload (SIGHUP, `--signal reload`,
// server.applyReload/reloadConfig, or reloadSecurity when embedded), as the
// reference's reloadAuthorization:
//
// - a new layer is built from the new settings before anything changes; a setting
//   it cannot use refuses the whole reload, logged with the file:line of the section
//   at fault, and the running layer stays;
// - new connections meet the new layer at once: users, tokens, accounts,
//   permissions, no_auth_user, and the TLS certificate, whose files are read again
//   on every reload (the reference rebuilds its tls.Config each time);
// - existing connections are checked again with the credentials of their CONNECT:
//   a user that is gone, or now in another account, is closed without a word
//   ('Client Closed', it reconnects and is judged afresh); one whose credentials no
//   longer authenticate gets -ERR 'Authorization Violation'; the others take their
//   new permissions, and each subscription those no longer allow is removed with
//   -ERR 'Permissions Violation for Subscription to "foo" (sid "1")';
// - TLS connections keep the session they have.

import { ConfigError, type ConfEntry } from '../config/conf.js';
import type { LoadedConfig } from '../config/load.js';
import { CloseReason, ErrText, goQuote } from '../protocol/errors.js';
import { type ConnectOptions, parseConnect } from '../protocol/connect.js';
import type { Client } from '../server/client.js';
import { ReloadError, type ReloadContext, type ReloadHook } from '../server/reload.js';
import type { Server } from '../server/server.js';
import { securityFromSettings } from './config.js';
import { SecurityConfigError } from './errors.js';
import type { SecurityOptions } from './options.js';
import { Security } from './security.js';
import { DEFAULT_TLS_TIMEOUT, TlsConfigError } from './tls.js';
import type { UserConfig } from './users.js';
import { installLinks } from './accounts.js';

/** The config sections the security layer reads (canonical names, see config.ts). */
export const SECURITY_SECTIONS: readonly string[] = [
  'authorization',
  'accounts',
  'no_auth_user',
  'operator',
  'resolver',
  'resolver_preload',
  'trusted',
  'tls',
  'allow_non_tls',
];

/** What a server's security layer runs with, and where a reload takes the next from. */
interface Watch {
  security: Security | null;
  options: SecurityOptions | null;
  /** The command line's security flags, which win over the file on reload too. */
  flags: ReadonlyMap<string, string>;
  /** The config names an account resolver; a reload may not add or remove one. */
  resolver: boolean;
  /** Set by reloadSecurity for the duration of its reload. */
  pending: SecurityOptions | null | undefined;
}

const watches = new WeakMap<Server, Watch>();

function watchOf(server: Server): Watch {
  let w = watches.get(server);
  if (w === undefined) {
    const watch: Watch = {
      security: null,
      options: null,
      flags: new Map(),
      resolver: false,
      pending: undefined,
    };
    watches.set(server, watch);
    server.reloadHooks.push(securityHook(server, watch));
    w = watch;
  }
  return w;
}

/**
 * Registers the security layer's reload hook once per server and records the layer
 * in force (attachSecurity and the command line call this; `security` is null when
 * nothing is configured, so that a reload may still add authorization later).
 */
export function watchSecurity(
  server: Server,
  security: Security | null,
  options: SecurityOptions | null,
  settings?: { flags: ReadonlyMap<string, string>; config: LoadedConfig | null },
): void {
  const w = watchOf(server);
  w.security = security;
  w.options = options;
  if (settings !== undefined) {
    w.flags = settings.flags;
    w.resolver = settings.config?.sections.has('resolver') ?? false;
  }
}

/**
 * The embedding program's reload: replaces the security settings of a running
 * server (null for none) exactly as a config reload would, existing connections
 * checked again. Throws ReloadError, and changes nothing, when they are refused.
 */
export function reloadSecurity(server: Server, options: SecurityOptions | null): void {
  const w = watchOf(server);
  w.pending = options;
  try {
    server.applyReload({});
  } finally {
    w.pending = undefined;
  }
}

function securityHook(server: Server, w: Watch): ReloadHook {
  return {
    name: 'security',
    sections: SECURITY_SECTIONS,
    prepare: (ctx) => {
      const next = nextOptions(w, ctx);
      if (next === undefined) return null;
      refuseUnsupported(w, next, ctx.config);
      let security: Security | null = null;
      if (next !== null) {
        try {
          security = new Security(server, next, w.security?.bcrypt);
        } catch (err) {
          throw refusal(err, ctx.config);
        }
      }
      return () => {
        apply(server, w, security, next);
      };
    },
  };
}

/** The settings this reload installs; undefined when it leaves security alone. */
function nextOptions(w: Watch, ctx: ReloadContext): SecurityOptions | null | undefined {
  if (w.pending !== undefined) return w.pending;
  const config = ctx.config;
  // A reload from code without a config file changes options only.
  if (config === null) return undefined;
  if (SECURITY_SECTIONS.some((s) => ctx.changedSections.has(s))) {
    try {
      return securityFromSettings(config, w.flags);
    } catch (err) {
      throw refusal(err, config);
    }
  }
  // The same settings: the certificate files are read again all the same, since
  // replacing them in place is how certificates are renewed.
  if (w.options?.tls !== undefined && w.options.tls !== null) return w.options;
  return undefined;
}

/** What the reference refuses to change at run time, with its texts. */
function refuseUnsupported(
  w: Watch,
  next: SecurityOptions | null,
  config: LoadedConfig | null,
): void {
  const before = w.options;
  const oldNoAuth = before?.noAuthUser ?? '';
  const newNoAuth = next?.noAuthUser ?? '';
  // The one change the reference allows: dropping no_auth_user along with its user.
  if (
    oldNoAuth !== newNoAuth &&
    !(oldNoAuth !== '' && newNoAuth === '' && !hasUser(next, oldNoAuth))
  ) {
    throw new ReloadError(
      `config reload not supported for NoAuthUser: old=${oldNoAuth}, new=${newNoAuth}`,
    );
  }
  if (!sameList(before?.trustedKeys, next?.trustedKeys)) {
    throw new ReloadError(
      `config reload not supported for TrustedKeys: old=${goList(before?.trustedKeys)}, new=${goList(next?.trustedKeys)}`,
    );
  }
  if (!sameList(before?.operators, next?.operators)) {
    throw new ReloadError('config reload not supported for TrustedOperators');
  }
  if (config !== null && config.sections.has('resolver') !== w.resolver) {
    throw new ReloadError('config reload does not support moving to or from an account resolver');
  }
}

function allUsers(o: SecurityOptions | null): UserConfig[] {
  if (o === null) return [];
  const list = [...(o.users ?? [])];
  for (const a of Object.values(o.accounts ?? {})) list.push(...(a.users ?? []));
  return list;
}

function hasUser(o: SecurityOptions | null, name: string): boolean {
  return allUsers(o).some((u) => u.user === name || u.nkey === name);
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = [...(a ?? [])].sort();
  const y = [...(b ?? [])].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** A string slice as Go's %v prints it: [a b]. */
function goList(list: readonly string[] | undefined): string {
  return `[${[...(list ?? [])].sort().join(' ')}]`;
}

/** A refused reload's error, with the file:line:col of the section at fault when known. */
function refusal(err: unknown, config: LoadedConfig | null): Error {
  if (err instanceof ReloadError || err instanceof ConfigError) return new ReloadError(err.message);
  const message = err instanceof Error ? err.message : String(err);
  let entry: ConfEntry | undefined;
  if (config !== null) {
    if (err instanceof TlsConfigError) entry = config.sections.get('tls');
    else if (err instanceof SecurityConfigError && err.section !== null) {
      entry = config.sections.get(err.section);
    }
  }
  return new ReloadError(entry === undefined ? message : new ConfigError(entry, message).message);
}

// ---- applying -------------------------------------------------------------------------

function apply(
  server: Server,
  w: Watch,
  security: Security | null,
  next: SecurityOptions | null,
): void {
  logChanges(server, w.options, next);
  const previous = w.security;
  if (security !== null) security.install();
  else uninstall(server);
  previous?.retire();
  w.security = security;
  w.options = next;
  recheckClients(server, previous, security);
}

/** No security any more: $G alone, no authentication, no TLS. */
function uninstall(server: Server): void {
  for (const name of [...server.accounts.keys()]) {
    if (name !== server.globalAccount.name) server.accounts.delete(name);
  }
  const g = server.globalAccount;
  if (g.links !== null) {
    // Its stream import shadows go first.
    installLinks([g], new Map());
    g.links = null;
  }
  server.security = null;
  server.authRequired = false;
}

/**
 * The reference's "Reloaded: ..." lines for its authorization options, in the order
 * of its Options struct. It logs users and accounts on every reload (it cannot
 * compare them), so they are logged whenever the security layer is rebuilt.
 */
function logChanges(
  server: Server,
  before: SecurityOptions | null,
  after: SecurityOptions | null,
): void {
  const log = (text: string): void => {
    server.logger.info(`Reloaded: ${text}`);
  };
  const nkeys = (o: SecurityOptions | null): string =>
    JSON.stringify(
      allUsers(o)
        .filter((u) => (u.nkey ?? '') !== '')
        .sort((a, b) => (a.nkey! < b.nkey! ? -1 : 1)),
    );
  if (nkeys(before) !== nkeys(after)) log('authorization nkey users');
  log('authorization users');
  log('accounts');
  if ((before?.user ?? '') !== (after?.user ?? '')) log('authorization username');
  if ((before?.password ?? '') !== (after?.password ?? '')) log('authorization password');
  if ((before?.token ?? '') !== (after?.token ?? '')) log('authorization token');
  const timeout = (o: SecurityOptions | null): number => o?.tls?.timeout ?? DEFAULT_TLS_TIMEOUT;
  if (timeout(before) !== timeout(after)) log(`tls timeout = ${timeout(after)}`);
  const tlsOn = (o: SecurityOptions | null): boolean => o?.tls !== undefined && o.tls !== null;
  if (tlsOn(after)) log('tls = enabled');
  else if (tlsOn(before)) log('tls = disabled');
}

// ---- existing connections ----------------------------------------------------------------

let defaultConnect: ConnectOptions | null = null;

/** CONNECT's defaults: what a client that has not sent one is checked with. */
function emptyConnect(): ConnectOptions {
  if (defaultConnect === null) {
    const parsed = parseConnect('{}');
    if (typeof parsed === 'string') throw new Error(parsed);
    defaultConnect = parsed.options;
  }
  return defaultConnect;
}

/**
 * As the reference's reloadAuthorization: clients whose user is gone or moved to
 * another account are closed; the others are authenticated again, then lose the
 * subscriptions their new permissions no longer allow.
 *
 * Clients still before their CONNECT are left to it: it is checked against the new
 * layer when it comes (the reference closes them, since their empty credentials
 * fail).
 */
function recheckClients(server: Server, previous: Security | null, next: Security | null): void {
  const moved: Client[] = [];
  const check: Client[] = [];
  for (const c of server.clients.values()) {
    if (c.kind !== 'client' || c.closed || !c.authorized) continue;
    if (movedAccount(c, previous, next)) moved.push(c);
    else check.push(c);
  }
  for (const c of moved) {
    if (server.logger.debugEnabled) {
      server.logger.debug(`${c.label()} - user removed or moved to another account by reload`);
    }
    c.close(CloseReason.clientClosed);
  }
  for (const c of check) {
    const o = c.connectOpts ?? emptyConnect();
    const verdict = next === null ? true : next.authenticate(c, o);
    if (typeof verdict === 'boolean') settle(server, c, o, verdict);
    else {
      // bcrypt, off the event loop; meanwhile the client keeps its permissions.
      void verdict.then((ok) => {
        settle(server, c, o, ok);
      });
    }
  }
  server.flushPending();
}

/**
 * The reference's clientHasMovedToDifferentAccount, for users of a users list (by
 * name or NKEY, or the no_auth_user): gone from the new list, or in another account.
 * Unlike the reference, a client of a single `authorization { user, password }` is
 * not counted as gone on every reload: its credentials are checked like a token's.
 */
function movedAccount(c: Client, previous: Security | null, next: Security | null): boolean {
  if (previous === null) return false;
  const o = c.connectOpts;
  const nkey = o?.nkey ?? '';
  if (nkey !== '' && previous.users.byNkey.has(nkey)) {
    const rec = next?.users.byNkey.get(nkey);
    return rec === undefined || rec.account.name !== c.account.name;
  }
  let user = o?.user ?? '';
  const noCredentials = user === '' && (o?.pass ?? '') === '' && (o?.authToken ?? '') === '';
  if (noCredentials && nkey === '' && (o?.jwt ?? '') === '' && previous.noAuthUser !== null) {
    user = previous.noAuthUser.name;
  }
  if (user === '' || !previous.users.byName.has(user)) return false;
  const rec = next?.users.byName.get(user);
  return rec === undefined || rec.account.name !== c.account.name;
}

/** After the new verdict: the reference's authViolation, or processSubsOnConfigReload. */
function settle(server: Server, c: Client, o: ConnectOptions, ok: boolean): void {
  if (c.closed) return;
  if (!ok) {
    const s = server.security;
    let who = '';
    if (s instanceof Security && !s.operatorMode) {
      if (s.users.byNkey.size > 0) who = ` - Nkey ${JSON.stringify(o.nkey)}`;
      else if (s.users.byName.size > 0) who = ` - User ${JSON.stringify(o.user)}`;
    }
    server.logger.error(`${c.label()} - authentication error${who}`);
    c.close(CloseReason.authFailure, ErrText.authViolation);
    return;
  }
  const perms = c.perms;
  if (perms === null) return;
  for (const sub of [...c.subs.values()]) {
    // As the reference: a queue subscription stays if either its subject or its
    // subject with that queue is allowed.
    const allowed =
      perms.checkSubscribe(sub.subject, null) === null ||
      (sub.queue !== null && perms.checkSubscribe(sub.subject, sub.queue) === null);
    if (allowed) continue;
    c.removeSubscription(sub);
    c.sendErr(
      `Permissions Violation for Subscription to ${goQuote(sub.subject)} (sid ${goQuote(sub.sid)})`,
    );
    server.logger.info(
      `Removed sub ${goQuote(sub.subject)} (sid ${goQuote(sub.sid)}) for ${authUser(c, o)} - not authorized`,
    );
  }
  server.flushPending();
}

/** The reference's getAuthUser, for the log. */
function authUser(c: Client, o: ConnectOptions): string {
  if (o.nkey !== '') return `Nkey ${JSON.stringify(o.nkey)}`;
  if (o.user !== '') return `User ${JSON.stringify(o.user)}`;
  if (o.jwt !== '') return `JWT User ${JSON.stringify(c.user)}`;
  // The reference names the no_auth_user, which it wrote into the CONNECT options.
  return c.user !== '' ? `User ${JSON.stringify(c.user)}` : 'User "N/A"';
}
