// The websocket block's settings (the reference's WebsocketOpts), for the config file
// and for `startServer({ websocket: {...} })`.

export interface WebsocketTlsOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** Verifies client certificates against it when `verify` is on. */
  readonly caFile?: string;
  readonly verify?: boolean;
}

export interface WebsocketOptions {
  /** Default 0.0.0.0. */
  host: string;
  /** -1 or 0: a free port. */
  port: number;
  /** host:port given to clients in ws_connect_urls instead of the listener's. */
  advertise: string;
  /** Plain ws:// (the reference refuses to start without TLS unless this is set). */
  noTls: boolean;
  tls: WebsocketTlsOptions | null;
  /** The Origin must be the Host the request was sent to. */
  sameOrigin: boolean;
  /** Origins (scheme://host[:port]) allowed; empty: any. */
  allowedOrigins: string[];
  /** Offer permessage-deflate. */
  compression: boolean;
  /** Milliseconds the opening handshake may take; 0: Node's own limits. */
  handshakeTimeoutMs: number;
  /** The authorization block: replaces the server's user/password/token for WebSocket clients. */
  user: string;
  password: string;
  token: string;
  /** Seconds; 0: the server's auth timeout. */
  authTimeout: number;
  /** A user (of the server's users) for clients that send no credentials. */
  noAuthUser: string;
  /** A cookie whose value is the user JWT when CONNECT carries none. */
  jwtCookie: string;
}

export const WEBSOCKET_DEFAULTS: WebsocketOptions = {
  host: '0.0.0.0',
  port: -1,
  advertise: '',
  noTls: false,
  tls: null,
  sameOrigin: false,
  allowedOrigins: [],
  compression: false,
  handshakeTimeoutMs: 0,
  user: '',
  password: '',
  token: '',
  authTimeout: 0,
  noAuthUser: '',
  jwtCookie: '',
};

/** The reference's option checks (validateWebsocketOptions); a message per problem. */
export function validateWebsocketOptions(
  o: WebsocketOptions,
  server: { hasUsers: boolean },
): string[] {
  const problems: string[] = [];
  if (o.tls === null && !o.noTls) problems.push('websocket requires TLS configuration');
  for (const ao of o.allowedOrigins) {
    try {
      new URL(ao);
    } catch {
      problems.push(`unable to parse allowed origin: parse "${ao}": invalid URI for request`);
    }
  }
  if (server.hasUsers) {
    if (o.user !== '')
      problems.push(
        'websocket authentication username not compatible with presence of users/nkeys',
      );
    if (o.token !== '')
      problems.push('websocket authentication token not compatible with presence of users/nkeys');
  }
  return problems;
}
