// Plugs the WebSocket listener into a server: it opens with the server (after the
// monitor, before the client port, as the reference logs them), stops accepting in
// lame duck mode and closes with the server.

import type { Server } from '../server/server.js';
import { WebsocketListener } from './listener.js';
import { validateWebsocketOptions, WEBSOCKET_DEFAULTS, type WebsocketOptions } from './options.js';
import { Security } from '../auth/security.js';

export class WebsocketConfigError extends Error {
  override name = 'WebsocketConfigError';
}

export function attachWebsocket(
  server: Server,
  options: Partial<WebsocketOptions>,
): WebsocketListener {
  const o: WebsocketOptions = { ...WEBSOCKET_DEFAULTS, ...options };
  const security = server.security instanceof Security ? server.security : null;
  const problems = validateWebsocketOptions(o, { hasUsers: security?.hasUsers ?? false });
  if (o.noAuthUser !== '' && (security === null || !security.users.byName.has(o.noAuthUser))) {
    problems.push(
      `no_auth_user: ${JSON.stringify(o.noAuthUser)} not present as user or nkey in authorization block or account configuration`,
    );
  }
  if (o.jwtCookie !== '' && security?.operatorMode !== true) {
    problems.push(
      `trusted operators or trusted keys configuration is required for JWT authentication via cookie ${JSON.stringify(o.jwtCookie)}`,
    );
  }
  if (problems.length > 0) throw new WebsocketConfigError(problems.join('; '));
  const listener = new WebsocketListener(server, o);
  server.onStart(() => listener.start());
  server.onStopAccepting(() => {
    listener.stopAccepting();
  });
  server.onShutdown(() => listener.close());
  return listener;
}
