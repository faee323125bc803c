// The WebSocket listener (the reference's websocket block): an HTTP(S) server whose
// upgrade requests become clients of the server, through the same limits, INFO,
// authentication, subscriptions and slow-consumer rules as the client port. Anything
// that is not a valid upgrade gets the reference's HTTP error and is closed.

import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { readTlsMaterial } from '../auth/tls.js';
import type { Client } from '../server/client.js';
import type { Server as NatsServer } from '../server/server.js';
import type { AuthOverride, ClientListener, SideListener } from '../server/transport.js';
import { websocketAuth } from './auth.js';
import {
  acceptResponse,
  checkHandshake,
  type HandshakeRules,
  OriginPolicy,
  refusalResponse,
} from './handshake.js';
import type { WebsocketOptions } from './options.js';
import { WsTransport } from './transport.js';

export class WebsocketListener implements SideListener {
  readonly scheme: 'ws' | 'wss';
  port = 0;
  private readonly http: Server;
  private readonly rules: HandshakeRules;
  private readonly auth: AuthOverride | null;
  private readonly via: ClientListener;

  constructor(
    readonly server: NatsServer,
    readonly options: WebsocketOptions,
  ) {
    const tls = options.tls;
    this.scheme = tls !== null ? 'wss' : 'ws';
    const timeout = options.handshakeTimeoutMs;
    const httpOptions = {
      // Node checks these every connectionsCheckingInterval: keep it below the timeout.
      ...(timeout > 0
        ? {
            headersTimeout: timeout,
            requestTimeout: timeout,
            connectionsCheckingInterval: Math.min(1000, timeout),
          }
        : {}),
    };
    if (tls !== null) {
      const material = readTlsMaterial({
        certFile: tls.certFile,
        keyFile: tls.keyFile,
        caFile: tls.caFile ?? '',
      });
      const verify = tls.verify === true;
      this.http = createHttpsServer({
        ...httpOptions,
        ...material,
        requestCert: verify,
        rejectUnauthorized: verify,
      });
    } else {
      this.http = createHttpServer(httpOptions);
    }
    this.rules = {
      origins: new OriginPolicy(options.sameOrigin, options.allowedOrigins),
      compression: options.compression,
      jwtCookie: options.jwtCookie,
      tls: tls !== null,
    };
    this.auth = websocketAuth(server, options, '');
    const auth = this.auth;
    this.via = {
      idTag: 'wid',
      auth,
      info: (info) => {
        // The client port's TLS is not this listener's.
        delete info.tls_required;
        delete info.tls_verify;
        delete info.tls_available;
        if (auth?.required === true) info.auth_required = true;
        // As the reference: a WebSocket client reconnects to WebSocket URLs only.
        const urls = server.cluster?.wsClientUrls(info.ldm === true) ?? null;
        if (urls === null) delete info.connect_urls;
        else info.connect_urls = urls;
      },
    };
    this.http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      this.upgrade(req, socket, head);
    });
    // A plain request can never be an upgrade: it gets the reason's HTTP error.
    this.http.on('request', (req: IncomingMessage) => {
      this.upgrade(req, req.socket, Buffer.alloc(0));
    });
    if (timeout > 0) {
      // The whole handshake must be done in time, from the first byte or none at all.
      this.http.on('connection', (socket: Socket) => {
        socket.setTimeout(timeout, () => socket.destroy());
      });
    }
    this.http.on('clientError', (_err: Error, socket: Socket) => {
      if (!socket.destroyed) socket.end(refusalResponse(400));
    });
  }

  get host(): string {
    return this.options.host;
  }

  get advertise(): string {
    return this.options.advertise;
  }

  async start(): Promise<void> {
    const o = this.options;
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen({ host: o.host, port: o.port === -1 ? 0 : o.port }, () => {
        this.http.off('error', reject);
        resolve();
      });
    });
    this.http.on('error', (err) => {
      this.server.logger.error(`websocket listener error: ${err.message}`);
    });
    const address = this.http.address();
    this.port = typeof address === 'object' && address !== null ? address.port : o.port;
    this.server.sideListeners.set('websocket', this);
    this.server.logger.info(
      `Listening for websocket clients on ${this.scheme}://${o.host}:${this.port}`,
    );
    if (this.scheme === 'ws') {
      this.server.logger.warn('Websocket not configured with TLS. DO NOT USE IN PRODUCTION!');
    }
  }

  /** Stops accepting (lame duck); connections already made stay. */
  stopAccepting(): void {
    if (this.http.listening) this.http.close();
  }

  async close(): Promise<void> {
    if (!this.http.listening) return;
    await new Promise<void>((resolve) => {
      this.http.close(() => {
        resolve();
      });
      // Upgraded sockets are the server's clients now; only idle HTTP ones remain.
      this.http.closeIdleConnections();
    });
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const verdict = checkHandshake(req, this.rules);
    if ('status' in verdict) {
      this.server.logger.error(
        `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0} - websocket handshake error: ${verdict.reason}`,
      );
      if (!socket.destroyed) socket.end(refusalResponse(verdict.status));
      return;
    }
    if (this.server.shuttingDown || this.server.lameDuck) {
      socket.destroy();
      return;
    }
    socket.write(acceptResponse(verdict));
    socket.setTimeout(0);
    const transport = new WsTransport(socket, {
      masked: !verdict.noMasking,
      compress: verdict.compress,
      browser: verdict.browser,
      noCompressedFragments: verdict.safari,
    });
    const via: ClientListener =
      verdict.cookieJwt === ''
        ? this.via
        : { ...this.via, auth: websocketAuth(this.server, this.options, verdict.cookieJwt) };
    const client: Client | null = this.server.acceptConnection(transport, via);
    if (client === null) return;
    transport.closeReason = () => client.closeReason;
    transport.start(head);
  }

  varz(): Record<string, unknown> {
    const o = this.options;
    const v: Record<string, unknown> = {};
    if (o.host !== '') v.host = o.host;
    if (this.port !== 0) v.port = this.port;
    if (o.advertise !== '') v.advertise = o.advertise;
    if (o.noAuthUser !== '') v.no_auth_user = o.noAuthUser;
    if (o.jwtCookie !== '') v.jwt_cookie = o.jwtCookie;
    if (o.handshakeTimeoutMs > 0) v.handshake_timeout = o.handshakeTimeoutMs * 1e6;
    if (o.authTimeout > 0) v.auth_timeout = o.authTimeout;
    if (o.noTls) v.no_tls = true;
    if (o.sameOrigin) v.same_origin = true;
    if (o.allowedOrigins.length > 0) v.allowed_origins = [...o.allowedOrigins];
    if (o.compression) v.compression = true;
    return v;
  }
}
