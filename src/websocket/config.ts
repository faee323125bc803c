// The config file's `websocket { ... }` block (also `ws`), read as the reference's
// parseWebsocket does: listen/port/host, advertise, no_tls, tls, same_origin,
// allowed_origins (and its aliases), compression, handshake_timeout, authorization,
// no_auth_user, jwt_cookie. Importing this module registers the block.

import { parseAuthorization, parseTls } from '../auth/config.js';
import { ConfigError, type ConfValue } from '../config/conf.js';
import {
  expectBool,
  expectDuration,
  expectInt,
  expectMap,
  expectString,
  registerConfigKeys,
  splitHostPort,
  type LoadedConfig,
} from '../config/load.js';
import { WEBSOCKET_DEFAULTS, type WebsocketOptions } from './options.js';

registerConfigKeys(['websocket', 'ws']);

/** The block's options, or null when the file has none. */
export function websocketFromConfig(config: LoadedConfig | null): WebsocketOptions | null {
  const entry = config?.sections.get('websocket') ?? config?.sections.get('ws');
  if (entry === undefined || config === null) return null;
  return readWebsocketBlock(entry.value, config);
}

export function readWebsocketBlock(v: ConfValue, config: LoadedConfig): WebsocketOptions {
  const m = expectMap(v, 'websocket');
  const o: WebsocketOptions = { ...WEBSOCKET_DEFAULTS, allowedOrigins: [] };
  for (const e of m.value.values()) {
    if (e.usedAsVariable) continue;
    const value = e.value;
    switch (e.key.toLowerCase()) {
      case 'listen': {
        const hp =
          value.kind === 'int'
            ? { host: null, port: value.value }
            : splitHostPort(expectString(value, e.key));
        if (hp.host !== null) o.host = hp.host;
        if (hp.port !== null) o.port = hp.port;
        break;
      }
      case 'port':
        o.port = expectInt(value, e.key, -1);
        break;
      case 'host':
      case 'net':
        o.host = expectString(value, e.key);
        break;
      case 'advertise':
        o.advertise = expectString(value, e.key);
        break;
      case 'no_tls':
        o.noTls = expectBool(value, e.key);
        break;
      case 'tls': {
        const t = parseTls(value);
        o.tls = { certFile: t.certFile, keyFile: t.keyFile, caFile: t.caFile, verify: t.verify };
        break;
      }
      case 'same_origin':
        o.sameOrigin = expectBool(value, e.key);
        break;
      case 'allowed_origins':
      case 'allowed_origin':
      case 'allow_origins':
      case 'allow_origin':
      case 'origins':
      case 'origin':
        o.allowedOrigins =
          value.kind === 'array'
            ? value.value.map((x) => expectString(x, e.key))
            : [expectString(value, e.key)];
        break;
      case 'handshake_timeout':
        o.handshakeTimeoutMs = expectDuration(value, e.key, config);
        break;
      case 'compress':
      case 'compression':
        o.compression = expectBool(value, e.key);
        break;
      case 'authorization':
      case 'authentication': {
        const a = parseAuthorization(value);
        o.user = a.user;
        o.password = a.password;
        o.token = a.token;
        o.authTimeout = a.timeout ?? 0;
        break;
      }
      case 'jwt_cookie':
        o.jwtCookie = expectString(value, e.key);
        break;
      case 'no_auth_user':
        o.noAuthUser = expectString(value, e.key);
        break;
      default:
        throw new ConfigError(e, `unknown field "${e.key}"`);
    }
  }
  return o;
}
