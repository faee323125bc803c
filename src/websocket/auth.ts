// The websocket block's own authorization (the reference's auth override for WS
// clients): its user/password, token or no_auth_user replace the server's simple
// credentials for WebSocket clients, users and nkeys of the server still apply, and
// a JWT may come from a cookie when CONNECT carries none.

import { BcryptCache } from '../auth/bcrypt-cache.js';
import { Security } from '../auth/security.js';
import { checkSecret } from '../auth/users.js';
import type { Client, ConnectOptions } from '../server/client.js';
import type { Server } from '../server/server.js';
import type { AuthOverride } from '../server/transport.js';
import type { WebsocketOptions } from './options.js';

/** Null when the server's own authentication applies unchanged. */
export function websocketAuth(
  server: Server,
  o: WebsocketOptions,
  cookieJwt: string,
): AuthOverride | null {
  const override = o.user !== '' || o.token !== '' || o.noAuthUser !== '';
  if (!override && cookieJwt === '') return null;
  const security = server.security instanceof Security ? server.security : null;
  const bcrypt = security?.bcrypt ?? new BcryptCache();
  const withCookie = (opts: ConnectOptions): ConnectOptions =>
    cookieJwt !== '' && opts.jwt === '' ? { ...opts, jwt: cookieJwt } : opts;
  if (!override) {
    return {
      required: server.authRequired,
      timeoutMs: o.authTimeout * 1000,
      authenticate: (c, opts) => server.authenticate(c, withCookie(opts)),
    };
  }
  return {
    required: true,
    timeoutMs: o.authTimeout * 1000,
    authenticate(c: Client, given: ConnectOptions): boolean | Promise<boolean> {
      const opts = withCookie(given);
      const anonymous = opts.user === '' && opts.pass === '' && opts.authToken === '';
      if (security !== null && security.hasUsers) {
        if (o.noAuthUser !== '' && anonymous && opts.nkey === '' && opts.jwt === '') {
          return security.bindUserNamed(c, o.noAuthUser);
        }
        return server.authenticate(c, opts);
      }
      if (o.token !== '') return named(checkSecret(o.token, opts.authToken, bcrypt), c, '');
      if (o.user !== '') {
        if (opts.user !== o.user) return false;
        return named(checkSecret(o.password, opts.pass, bcrypt), c, o.user);
      }
      return false;
    },
  };
}

function named(
  verdict: boolean | Promise<boolean>,
  c: Client,
  user: string,
): boolean | Promise<boolean> {
  const done = (ok: boolean): boolean => {
    if (ok) c.user = user;
    return ok;
  };
  return typeof verdict === 'boolean' ? done(verdict) : verdict.then(done);
}
