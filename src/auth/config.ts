// The security layer's config file keys and flags, with the reference's names:
// authorization, accounts, no_auth_user, operator, resolver, resolver_preload,
// trusted_keys, tls, allow_non_tls; --user, --pass, --auth, --tls, --tlscert,
// --tlskey, --tlscacert, --tlsverify. Each key is checked when the file is loaded
// (so `-t` reports a bad one with file:line:col) and read again into
// SecurityOptions by securityFromSettings().

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  ConfigError,
  type ConfEntry,
  type ConfMap,
  type ConfValue,
  type ConfPosition,
} from '../config/conf.js';
import { registerFlag } from '../config/flags.js';
import { expectBool, expectString, type LoadedConfig, registerConfigKeys } from '../config/load.js';
import { parseGoDuration } from '../config/duration.js';
import type { ExportConfig, ImportConfig, ResponseType } from './accounts.js';
import { findJwt } from './jwt.js';
import { isPublicKey } from './nkeys.js';
import type { AccountConfig, AccountJetStream, SecurityOptions } from './options.js';
import {
  checkPermissionSubject,
  DEFAULT_RESPONSE_EXPIRES,
  DEFAULT_RESPONSE_MAX,
  type PermissionsConfig,
  type ResponsePermission,
  type SubjectPermission,
} from './permissions.js';
import { DEFAULT_TLS_TIMEOUT, type TlsOptions } from './tls.js';
import type { UserConfig } from './users.js';
import type { Server } from '../server/server.js';
import { watchSecurity } from './reload.js';
import { attachSecurity } from './security.js';

const OPERATOR_KEYS = ['operator', 'operators', 'roots', 'root', 'root_operators', 'root_operator'];
const RESOLVER_KEYS = ['resolver', 'account_resolver', 'accounts_resolver'];
const TRUSTED_KEYS = ['trusted', 'trusted_keys'];

function store(canonical: string, check: (e: ConfEntry, out: LoadedConfig) => void) {
  return (e: ConfEntry, out: LoadedConfig): void => {
    check(e, out);
    out.sections.set(canonical, e);
  };
}

registerConfigKeys(
  ['authorization'],
  store('authorization', (e, out) => {
    const a = parseAuthorization(e.value);
    if (a.timeout !== null) out.options.authTimeout = a.timeout;
  }),
);
registerConfigKeys(
  ['accounts'],
  store('accounts', (e) => parseAccounts(e.value)),
);
registerConfigKeys(
  ['no_auth_user'],
  store('no_auth_user', (e) => expectString(e.value, e.key)),
);
registerConfigKeys(
  OPERATOR_KEYS,
  store('operator', (e) => parseOperators(e.value)),
);
registerConfigKeys(
  RESOLVER_KEYS,
  store('resolver', (e) => parseResolver(e.value)),
);
registerConfigKeys(
  ['resolver_preload'],
  store('resolver_preload', (e) => parsePreload(e.value)),
);
registerConfigKeys(
  TRUSTED_KEYS,
  store('trusted', (e) => parseTrusted(e.value)),
);
registerConfigKeys(
  ['tls'],
  store('tls', (e) => parseTls(e.value)),
);
registerConfigKeys(
  ['allow_non_tls'],
  store('allow_non_tls', (e) => expectBool(e.value, e.key)),
);

registerFlag({ names: ['user'], value: true, help: 'User required for connections' });
registerFlag({ names: ['pass'], value: true, help: 'Password required for connections' });
registerFlag({
  names: ['auth'],
  value: true,
  help: 'Authorization token required for connections',
});
registerFlag({
  names: ['tls'],
  value: false,
  help: 'Enable TLS, do not verify clients (default: false)',
});
registerFlag({ names: ['tlscert'], value: true, help: 'Server certificate file' });
registerFlag({ names: ['tlskey'], value: true, help: 'Private key for server certificate' });
registerFlag({
  names: ['tlsverify'],
  value: false,
  help: 'Enable TLS, verify client certificates',
});
registerFlag({ names: ['tlscacert'], value: true, help: 'Client certificate CA for verification' });

// ---- helpers -------------------------------------------------------------------------

function fail(at: ConfPosition, reason: string): never {
  throw new ConfigError(at, reason);
}

function kind(v: ConfValue): string {
  return v.kind === 'string' ? `string "${v.value}"` : v.kind;
}

function map(v: ConfValue, what: string): ConfMap {
  if (v.kind !== 'map') fail(v, `${what}: expected a map, got ${kind(v)}`);
  return v;
}

function str(v: ConfValue, what: string): string {
  if (v.kind !== 'string') fail(v, `${what}: expected a string, got ${kind(v)}`);
  return v.value;
}

function strings(v: ConfValue, what: string): string[] {
  if (v.kind === 'string') return [v.value];
  if (v.kind !== 'array')
    fail(v, `${what}: expected a string or an array of strings, got ${kind(v)}`);
  return v.value.map((x) => str(x, what));
}

function entries(m: ConfMap): ConfEntry[] {
  return [...m.value.values()].filter((e) => !e.usedAsVariable);
}

function unknown(e: ConfEntry, where: string): never {
  fail(e, `unknown field "${e.key}"${where === '' ? '' : ` in ${where}`}`);
}

/** Seconds as the reference reads them: an integer or a float. */
function seconds(v: ConfValue, what: string): number {
  if (v.kind === 'int' || v.kind === 'float') {
    if (!(v.value > 0)) fail(v, `${what}: must be positive`);
    return v.value;
  }
  fail(v, `${what}: expected a number of seconds, got ${kind(v)}`);
}

// ---- authorization ------------------------------------------------------------------

interface Authorization {
  user: string;
  password: string;
  token: string;
  timeout: number | null;
  users: UserConfig[];
}

export function parseAuthorization(v: ConfValue): Authorization {
  const m = map(v, 'authorization');
  const a: Authorization = { user: '', password: '', token: '', timeout: null, users: [] };
  let defaults: PermissionsConfig | null = null;
  for (const e of entries(m)) {
    switch (e.key.toLowerCase()) {
      case 'user':
      case 'username':
        a.user = str(e.value, e.key);
        break;
      case 'pass':
      case 'password':
        a.password = str(e.value, e.key);
        break;
      case 'token':
        a.token = str(e.value, e.key);
        break;
      case 'timeout':
        a.timeout = seconds(e.value, 'authorization timeout');
        break;
      case 'users':
        a.users = parseUsers(e.value, '');
        break;
      case 'default_permission':
      case 'default_permissions':
      case 'permissions':
        defaults = parsePermissions(e.value);
        break;
      default:
        unknown(e, 'authorization');
    }
  }
  if (a.users.length > 0 && a.user !== '')
    fail(m, 'Can not have a single user/pass and a users array');
  if (a.users.length > 0 && a.token !== '') fail(m, 'Can not have a token and a users array');
  if (defaults !== null) {
    const d = defaults;
    a.users = a.users.map((u) => (u.permissions === undefined ? { ...u, permissions: d } : u));
  }
  return a;
}

function parseUsers(v: ConfValue, account: string): UserConfig[] {
  if (v.kind !== 'array') fail(v, `Expected users field to be an array, got ${kind(v)}`);
  return v.value.map((item) => {
    const um =
      item.kind === 'map'
        ? item
        : fail(item, `Expected user entry to be a map/struct, got ${kind(item)}`);
    let user = '';
    let password = '';
    let nkey = '';
    let permissions: PermissionsConfig | undefined;
    for (const e of entries(um)) {
      switch (e.key.toLowerCase()) {
        case 'user':
        case 'username':
          user = str(e.value, e.key);
          break;
        case 'pass':
        case 'password':
          password = str(e.value, e.key);
          break;
        case 'nkey':
          nkey = str(e.value, e.key);
          break;
        case 'permission':
        case 'permissions':
        case 'authorization':
          permissions = parsePermissions(e.value);
          break;
        case 'allowed_connection_types':
        case 'connection_types':
        case 'clients':
          // Only standard client connections exist here, so any list admits them.
          strings(e.value, e.key);
          break;
        default:
          unknown(e, 'user entry');
      }
    }
    if (nkey === '' && user === '') fail(um, 'User entry requires a user');
    if (nkey !== '') {
      if (!isPublicKey(nkey, 'user')) fail(um, 'Not a valid public nkey for a user');
      if (user !== '' || password !== '') fail(um, 'Nkey users do not take usernames or passwords');
    }
    const u: UserConfig = {
      user,
      password,
      nkey,
      account,
      ...(permissions !== undefined ? { permissions } : {}),
    };
    return u;
  });
}

export function parsePermissions(v: ConfValue): PermissionsConfig {
  const m = map(v, 'permissions');
  let publish: SubjectPermission | null = null;
  let subscribe: SubjectPermission | null = null;
  let responses: ResponsePermission | null = null;
  for (const e of entries(m)) {
    switch (e.key.toLowerCase()) {
      case 'pub':
      case 'publish':
      case 'import':
        publish = parseSubjectPermission(e.value);
        break;
      case 'sub':
      case 'subscribe':
      case 'export':
        subscribe = parseSubjectPermission(e.value);
        break;
      case 'publish_allow_responses':
      case 'allow_responses':
        responses = parseResponses(e.value);
        break;
      default:
        fail(e, `Unknown field "${e.key}" parsing permissions`);
    }
  }
  return { publish, subscribe, responses };
}

function permSubjects(v: ConfValue): string[] {
  let list: string[];
  if (v.kind === 'string') list = [v.value];
  else if (v.kind === 'array') {
    list = v.value.map((x) =>
      x.kind === 'string'
        ? x.value
        : fail(x, 'Subject in permissions array cannot be cast to string'),
    );
  } else {
    fail(v, `Expected subject permissions to be a subject, or array of subjects, got ${kind(v)}`);
  }
  for (const s of list) {
    const problem = checkPermissionSubject(s);
    if (problem !== null) fail(v, problem);
  }
  return list;
}

function parseSubjectPermission(v: ConfValue): SubjectPermission | null {
  if (v.kind !== 'map') return { allow: permSubjects(v), deny: null };
  let allow: string[] | null = null;
  let deny: string[] | null = null;
  const list = entries(v);
  if (list.length === 0) return null;
  for (const e of list) {
    switch (e.key.toLowerCase()) {
      case 'allow':
        allow = permSubjects(e.value);
        break;
      case 'deny':
        deny = permSubjects(e.value);
        break;
      default:
        fail(
          e,
          `Unknown field name "${e.key}" parsing subject permissions, only 'allow' or 'deny' are permitted`,
        );
    }
  }
  return { allow, deny };
}

function parseResponses(v: ConfValue): ResponsePermission | null {
  if (v.kind === 'bool') {
    return v.value ? { max: DEFAULT_RESPONSE_MAX, expires: DEFAULT_RESPONSE_EXPIRES } : null;
  }
  if (v.kind !== 'map') fail(v, 'error parsing response permissions, expected a boolean or a map');
  const r = { max: DEFAULT_RESPONSE_MAX, expires: DEFAULT_RESPONSE_EXPIRES };
  for (const e of entries(v)) {
    switch (e.key.toLowerCase()) {
      case 'max':
      case 'max_msgs':
      case 'max_messages':
      case 'max_responses': {
        if (e.value.kind !== 'int')
          fail(e.value, `${e.key}: expected an integer, got ${kind(e.value)}`);
        // 0 keeps the default; negative means no limit.
        if (e.value.value !== 0) r.max = e.value.value;
        break;
      }
      case 'expires':
      case 'expiration':
      case 'ttl': {
        if (e.value.kind !== 'string')
          fail(e.value, 'error parsing expires, not a duration string');
        let ms: number;
        try {
          ms = parseGoDuration(e.value.value);
        } catch (err) {
          fail(e.value, `error parsing expires: ${(err as Error).message}`);
        }
        if (ms !== 0) r.expires = ms;
        break;
      }
      default:
        fail(e, `Unknown field "${e.key}" parsing permissions`);
    }
  }
  return r;
}

// ---- accounts -------------------------------------------------------------------------

export function parseAccounts(v: ConfValue): Record<string, AccountConfig> {
  const out: Record<string, AccountConfig> = {};
  if (v.kind === 'array') {
    for (const item of v.value) {
      const name = str(item, 'accounts');
      if (name === '$G' || name === '$SYS') fail(item, `"${name}" is a Reserved Account`);
      if (Object.hasOwn(out, name)) fail(item, `Duplicate Account Entry: ${name}`);
      out[name] = {};
    }
    return out;
  }
  const m = map(v, 'accounts');
  for (const e of entries(m)) {
    const name = e.key;
    if (name === '$G' || name === '$SYS') fail(e, `"${name}" is a Reserved Account`);
    if (e.value.kind !== 'map') fail(e, 'Expected map entries for accounts');
    let users: UserConfig[] = [];
    let exports: ExportConfig[] = [];
    let imports: ImportConfig[] = [];
    let defaults: PermissionsConfig | null = null;
    let jetstream: AccountJetStream | undefined;
    for (const f of entries(e.value)) {
      switch (f.key.toLowerCase()) {
        case 'users':
          users = parseUsers(f.value, name);
          break;
        case 'exports':
          exports = parseExports(f.value);
          break;
        case 'imports':
          imports = parseImports(f.value);
          break;
        case 'default_permissions':
          defaults = parsePermissions(f.value);
          break;
        case 'jetstream':
          jetstream = parseAccountJetStream(f.value);
          break;
        case 'nkey':
        case 'mappings':
        case 'maps':
        case 'limits':
          fail(f, `"${f.key}" in an account is not supported by wirebus`);
          break;
        default:
          unknown(f, `account ${name}`);
      }
    }
    if (defaults !== null) {
      const d = defaults;
      users = users.map((u) => (u.permissions === undefined ? { ...u, permissions: d } : u));
    }
    out[name] =
      jetstream === undefined
        ? { users, exports, imports }
        : { users, exports, imports, jetstream };
  }
  return out;
}

/** The limit an account's `jetstream` map sets with each key, as the reference names them. */
const ACCOUNT_JS_KEYS: Readonly<Record<string, keyof Exclude<AccountJetStream, boolean>>> = {
  max_memory: 'maxMemory',
  max_mem: 'maxMemory',
  mem: 'maxMemory',
  memory: 'maxMemory',
  max_store: 'maxStore',
  max_file: 'maxStore',
  max_disk: 'maxStore',
  store: 'maxStore',
  disk: 'maxStore',
  max_streams: 'maxStreams',
  streams: 'maxStreams',
  max_consumers: 'maxConsumers',
  consumers: 'maxConsumers',
  max_bytes_required: 'maxBytesRequired',
  max_stream_bytes: 'maxBytesRequired',
  max_bytes: 'maxBytesRequired',
  mem_max_stream_bytes: 'memoryMaxStreamBytes',
  memory_max_stream_bytes: 'memoryMaxStreamBytes',
  disk_max_stream_bytes: 'storeMaxStreamBytes',
  store_max_stream_bytes: 'storeMaxStreamBytes',
  max_ack_pending: 'maxAckPending',
};

/** A value as Go's %v prints it in the reference's messages. */
function goValue(v: ConfValue): string {
  return v.kind === 'map' || v.kind === 'array' ? kind(v) : String(v.value);
}

/**
 * An account's `jetstream`: enabled/disabled, or limits (`max_mem`, `max_file`,
 * `max_streams`, `max_consumers`, `max_ack_pending`, `memory_max_stream_bytes`,
 * `store_max_stream_bytes`, `max_bytes_required` and the reference's other names for them).
 */
function parseAccountJetStream(v: ConfValue): AccountJetStream {
  if (v.kind === 'bool') return v.value;
  if (v.kind === 'string') {
    const w = v.value.toLowerCase();
    if (w === 'enabled' || w === 'enable') return true;
    if (w === 'disabled' || w === 'disable') return false;
    fail(v, `Expected 'enabled' or 'disabled' for string value, got '${v.value}'`);
  }
  const m = map(v, 'jetstream');
  const limits: Record<string, number | boolean> = {};
  for (const f of entries(m)) {
    const field = ACCOUNT_JS_KEYS[f.key.toLowerCase()];
    if (field === undefined) unknown(f, 'jetstream');
    else if (field === 'maxBytesRequired') {
      if (f.value.kind !== 'bool')
        fail(f, `Expected a parseable bool for "${f.key}", got ${goValue(f.value)}`);
      limits[field] = f.value.value;
    } else {
      if (f.value.kind !== 'int')
        fail(f, `Expected a parseable size for "${f.key}", got ${goValue(f.value)}`);
      limits[field] = f.value.value;
    }
  }
  return limits;
}

function parseExports(v: ConfValue): ExportConfig[] {
  if (v.kind !== 'array') fail(v, `Exports should be an array, got ${kind(v)}`);
  return v.value.map((item) => {
    const m =
      item.kind === 'map'
        ? item
        : fail(item, `Export Items should be a map with type entry, got ${kind(item)}`);
    let stream = '';
    let service = '';
    let accounts: string[] | null = null;
    let responseType: ResponseType = 'singleton';
    for (const e of entries(m)) {
      switch (e.key.toLowerCase()) {
        case 'stream':
          if (service !== '') fail(e, `Detected stream but already saw a service`);
          stream = str(e.value, 'stream');
          break;
        case 'service':
          if (stream !== '') fail(e, `Detected service but already saw a stream`);
          service = str(e.value, 'service');
          break;
        case 'accounts':
          accounts = strings(e.value, 'accounts');
          break;
        case 'response':
        case 'response_type': {
          const t = str(e.value, e.key).toLowerCase();
          if (t === 'single' || t === 'singleton') responseType = 'singleton';
          else if (t === 'stream') responseType = 'stream';
          else if (t === 'chunk' || t === 'chunked') responseType = 'chunked';
          else fail(e.value, `Unknown response type: "${t}"`);
          break;
        }
        case 'response_threshold':
        case 'threshold':
        case 'latency':
        case 'account_token_position':
          break;
        default:
          unknown(e, 'export');
      }
    }
    const subject = stream !== '' ? stream : service;
    if (subject === '') fail(m, 'Export Items should have a stream or a service');
    if (checkPermissionSubject(subject) !== null) fail(m, `invalid export subject "${subject}"`);
    return { kind: stream !== '' ? 'stream' : 'service', subject, accounts, responseType };
  });
}

function parseImports(v: ConfValue): ImportConfig[] {
  if (v.kind !== 'array') fail(v, `Imports should be an array, got ${kind(v)}`);
  return v.value.map((item) => {
    const m =
      item.kind === 'map'
        ? item
        : fail(item, `Import Items should be a map with type entry, got ${kind(item)}`);
    let which: 'stream' | 'service' | null = null;
    let account = '';
    let subject = '';
    let prefix = '';
    let to = '';
    for (const e of entries(m)) {
      const k = e.key.toLowerCase();
      switch (k) {
        case 'stream':
        case 'service': {
          if (which !== null) fail(e, `Detected ${k} but already saw a ${which}`);
          which = k;
          const am =
            e.value.kind === 'map'
              ? e.value
              : fail(
                  e.value,
                  `${k === 'stream' ? 'Stream' : 'Service'} entry should be an account map, got ${kind(e.value)}`,
                );
          for (const f of entries(am)) {
            const fk = f.key.toLowerCase();
            if (fk === 'account') account = str(f.value, 'account');
            else if (fk === 'subject') subject = str(f.value, 'subject');
            else unknown(f, 'import');
          }
          if (account === '' || subject === '') fail(e, 'Expect an account name and a subject');
          break;
        }
        case 'prefix':
          prefix = str(e.value, 'prefix');
          break;
        case 'to':
          to = str(e.value, 'to');
          break;
        case 'share':
          expectBool(e.value, 'share');
          break;
        default:
          unknown(e, 'import');
      }
    }
    if (which === null) fail(m, 'Import Items should have a stream or a service');
    if (which === 'stream' && prefix !== '' && to !== '') {
      fail(m, "Stream import can not have a 'prefix' and a 'to' property");
    }
    return { kind: which, account, subject, prefix, to };
  });
}

// ---- operator mode -------------------------------------------------------------------

function readJwt(text: string, at: ConfValue): string {
  if (text.startsWith('eyJ')) return text;
  let content: string;
  const candidates = [text, resolve(dirname(at.file), text)];
  let lastError = '';
  for (const path of candidates) {
    try {
      content = readFileSync(path, 'utf8');
      const jwt = findJwt(content);
      if (jwt === null) fail(at, `error parsing operator JWT: no JWT found in ${path}`);
      return jwt;
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      lastError = (err as Error).message;
    }
  }
  fail(at, `error parsing operator JWT: ${lastError}`);
}

export function parseOperators(v: ConfValue): string[] {
  const list = v.kind === 'array' ? v.value : [v];
  return list.map((x) => readJwt(str(x, 'operator'), x));
}

function parseResolver(v: ConfValue): void {
  if (v.kind === 'string' && /^\s*(MEM|MEMORY)\s*$/i.test(v.value)) return;
  fail(v, 'resolver: only the MEMORY resolver (with resolver_preload) is supported by wirebus');
}

export function parsePreload(v: ConfValue): Record<string, string> {
  const m = map(v, 'resolver_preload');
  const out: Record<string, string> = {};
  for (const e of entries(m)) {
    if (e.value.kind !== 'string') fail(e.value, 'preload map value should be a string JWT');
    if (!isPublicKey(e.key, 'account'))
      fail(e, `resolver_preload: "${e.key}" is not an account public key`);
    out[e.key] = e.value.value;
  }
  return out;
}

export function parseTrusted(v: ConfValue): string[] {
  const keys = strings(v, 'trusted');
  for (const k of keys) {
    if (!isPublicKey(k, 'operator'))
      fail(v, `trust key "${k}" required to be a valid public operator nkey`);
  }
  return keys;
}

// ---- TLS -------------------------------------------------------------------------------

export function parseTls(v: ConfValue): Omit<TlsOptions, 'allowNonTls'> {
  const m = map(v, 'tls');
  let certFile = '';
  let keyFile = '';
  let caFile = '';
  let verify = false;
  let timeout = DEFAULT_TLS_TIMEOUT;
  for (const e of entries(m)) {
    switch (e.key.toLowerCase()) {
      case 'cert_file':
        certFile = str(e.value, e.key);
        break;
      case 'key_file':
        keyFile = str(e.value, e.key);
        break;
      case 'ca_file':
        caFile = str(e.value, e.key);
        break;
      case 'verify':
        verify = expectBool(e.value, e.key);
        break;
      case 'timeout':
        timeout = seconds(e.value, 'tls timeout');
        break;
      case 'verify_and_map':
      case 'verify_cert_and_check_known_urls':
      case 'cipher_suites':
      case 'curve_preferences':
      case 'pinned_certs':
      case 'insecure':
      case 'handshake_first':
      case 'cert_store':
      case 'cert_match':
      case 'cert_match_by':
      case 'ocsp_peer':
        fail(e, `tls "${e.key}" is not supported by wirebus`);
        break;
      default:
        unknown(e, 'tls');
    }
  }
  if (certFile === '') fail(m, "missing 'cert_file' in TLS configuration");
  if (keyFile === '') fail(m, "missing 'key_file' in TLS configuration");
  return { certFile, keyFile, caFile, verify, timeout };
}

// ---- everything together -------------------------------------------------------------------

/**
 * SecurityOptions from a loaded config file and the security flags (the flags win,
 * as the reference's); null when neither configures anything. Throws ConfigError.
 */
export function securityFromSettings(
  config: LoadedConfig | null,
  flags: ReadonlyMap<string, string>,
): SecurityOptions | null {
  const section = (name: string): ConfEntry | undefined => config?.sections.get(name);
  let token = '';
  let user = '';
  let password = '';
  let users: UserConfig[] = [];
  const auth = section('authorization');
  if (auth !== undefined) {
    const a = parseAuthorization(auth.value);
    token = a.token;
    user = a.user;
    password = a.password;
    users = a.users;
  }
  const accountsEntry = section('accounts');
  const accounts = accountsEntry !== undefined ? parseAccounts(accountsEntry.value) : {};
  const anyAccountUsers = Object.values(accounts).some((a) => (a.users?.length ?? 0) > 0);
  if (accountsEntry !== undefined && anyAccountUsers) {
    if (user !== '') fail(accountsEntry, 'Can not have a single user/pass and accounts');
    if (token !== '') fail(accountsEntry, 'Can not have a token and accounts');
  }
  const noAuthEntry = section('no_auth_user');
  const noAuthUser = noAuthEntry !== undefined ? str(noAuthEntry.value, 'no_auth_user') : '';
  const operatorEntry = section('operator');
  const operators = operatorEntry !== undefined ? parseOperators(operatorEntry.value) : [];
  const trustedEntry = section('trusted');
  const trustedKeys = trustedEntry !== undefined ? parseTrusted(trustedEntry.value) : [];
  const preloadEntry = section('resolver_preload');
  const resolverPreload = preloadEntry !== undefined ? parsePreload(preloadEntry.value) : {};
  const tlsEntry = section('tls');
  const allowNonTlsEntry = section('allow_non_tls');
  const allowNonTls =
    allowNonTlsEntry !== undefined && expectBool(allowNonTlsEntry.value, 'allow_non_tls');
  let tls: TlsOptions | null =
    tlsEntry !== undefined ? { ...parseTls(tlsEntry.value), allowNonTls } : null;

  // Flags win over the file.
  if (flags.has('user')) user = flags.get('user')!;
  if (flags.has('pass')) password = flags.get('pass')!;
  if (flags.has('auth')) token = flags.get('auth')!;
  const tlsOn = flags.get('tls') === 'true' || flags.get('tlsverify') === 'true';
  if (tlsOn || flags.has('tlscert') || flags.has('tlskey') || flags.has('tlscacert')) {
    const base: TlsOptions = tls ?? {
      certFile: '',
      keyFile: '',
      caFile: '',
      verify: false,
      timeout: DEFAULT_TLS_TIMEOUT,
      allowNonTls,
    };
    tls = {
      ...base,
      certFile: flags.get('tlscert') ?? base.certFile,
      keyFile: flags.get('tlskey') ?? base.keyFile,
      caFile: flags.get('tlscacert') ?? base.caFile,
      verify: flags.has('tlsverify') ? flags.get('tlsverify') === 'true' : base.verify,
    };
    const at = { file: '<command line>', line: 0, col: 0 };
    if (tls.certFile === '')
      fail(at, 'TLS Server certificate must be present and valid (--tlscert)');
    if (tls.keyFile === '') fail(at, 'TLS Server private key must be present and valid (--tlskey)');
  }
  const o: SecurityOptions = {
    token,
    user,
    password,
    users,
    accounts,
    noAuthUser,
    operators,
    trustedKeys,
    resolverPreload,
    tls,
  };
  const nothing =
    token === '' &&
    user === '' &&
    users.length === 0 &&
    Object.keys(accounts).length === 0 &&
    noAuthUser === '' &&
    operators.length === 0 &&
    trustedKeys.length === 0 &&
    tls === null;
  return nothing ? null : o;
}

/**
 * For the command line: reads the security settings of the config file and flags
 * and attaches the security layer to the server when there are any; a SIGHUP reads
 * them again (reload.ts), with the same flags on top. Throws ConfigError or
 * SecurityConfigError (a message for the user).
 */
export function attachSecurityFromSettings(
  server: Server,
  config: LoadedConfig | null,
  flags: ReadonlyMap<string, string>,
): void {
  const options = securityFromSettings(config, flags);
  const security = options !== null ? attachSecurity(server, options) : null;
  // Registered even without security, so that a reload can add authorization.
  watchSecurity(server, security, options, { flags, config });
}
