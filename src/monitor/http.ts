// The HTTP monitoring listener and its router. Endpoints are registered by path
// (`monitor.register('/varz', handler)`); the core endpoints live in their own files
// and other layers (streaming) add theirs on the same listener. Paths match exactly,
// below `http_base_path`, as the reference's ServeMux patterns do. A handler returns
// a response object; a BadRequest it throws becomes HTTP 400, anything else 500, so
// no query string can take the server down.

import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { posix } from 'node:path';
import type { Server } from '../server/server.js';
import { goEscapes } from './format.js';
import { BadRequest } from './query.js';

export interface MonitorRequest {
  /** The registered path, without the base path: `/varz`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
}

export interface MonitorResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export type MonitorHandler = (req: MonitorRequest) => MonitorResponse | Promise<MonitorResponse>;

/** JSONP callbacks are limited to dotted JavaScript names: the text is echoed as script. */
const CALLBACK = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;
const CALLBACK_MAX = 128;

/**
 * JSON as the reference writes it: 2-space indent (compact for /healthz), or
 * `callback(json)` as application/javascript when the query names a callback.
 */
export function json(
  value: unknown,
  query: URLSearchParams,
  options: { status?: number; compact?: boolean } = {},
): MonitorResponse {
  const text = goEscapes(
    options.compact === true ? JSON.stringify(value) : JSON.stringify(value, null, 2),
  );
  const status = options.status ?? 200;
  const callback = query.get('callback') ?? '';
  if (callback === '') return { status, contentType: 'application/json', body: text };
  if (callback.length > CALLBACK_MAX || !CALLBACK.test(callback)) {
    throw new BadRequest(`invalid callback: ${callback.slice(0, CALLBACK_MAX)}`);
  }
  return { status, contentType: 'application/javascript', body: `${callback}(${text})` };
}

/**
 * HTTP 400. The reference sends its message as text/plain; we send the same message
 * as `{"error": "..."}`, so that every answer of the monitor is JSON.
 */
export function badRequest(message: string): MonitorResponse {
  return {
    status: 400,
    contentType: 'application/json',
    body: JSON.stringify({ error: message }, null, 2),
  };
}

/** Go's http.NotFound, byte for byte. */
export function notFound(): MonitorResponse {
  return {
    status: 404,
    contentType: 'text/plain; charset=utf-8',
    body: '404 page not found\n',
    headers: { 'X-Content-Type-Options': 'nosniff' },
  };
}

/** `path.Join(base, p)` as the reference builds its patterns; '' and '/' are the root. */
export function joinBase(base: string, path: string): string {
  let b = base === '' ? '/' : base;
  if (!b.startsWith('/')) b = '/' + b;
  const joined = posix.normalize(posix.join(b, path));
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

interface Route {
  readonly path: string;
  readonly handler: MonitorHandler;
}

export class Monitor {
  readonly server: Server;
  /** Requests served per registered path: /varz's `http_req_stats`. */
  readonly requestStats = new Map<string, number>();
  /** The address the listener binds: `http_host`, else the client listener's. */
  readonly host: string;
  /** The normalized base path; `/` when none is set. */
  readonly basePath: string;
  /** The port actually bound (0 before start). */
  port = 0;
  private readonly routes = new Map<string, Route>();
  private http: HttpServer | null = null;
  private closing: Promise<void> | null = null;

  constructor(server: Server) {
    this.server = server;
    const o = server.options;
    this.host = o.httpHost !== '' ? o.httpHost : o.host;
    this.basePath = joinBase(o.httpBasePath, '/');
  }

  /** Serves `path` (below the base path); a later registration of a path replaces it. */
  register(path: string, handler: MonitorHandler): void {
    const clean = joinBase('/', path);
    this.routes.set(joinBase(this.basePath, clean), { path: clean, handler });
  }

  /** Registered paths, without the base path. */
  paths(): string[] {
    return [...this.routes.values()].map((r) => r.path);
  }

  /** `http://host:port` of the listener, with a loopback host when bound to any address. */
  get url(): string {
    const host = this.host === '0.0.0.0' || this.host === '::' ? '127.0.0.1' : this.host;
    return `http://${hostPort(host, this.port)}`;
  }

  /** Opens the listener; rejects when the port cannot be bound. */
  async start(): Promise<void> {
    const requested = this.server.options.httpPort;
    const http = createServer((req, res) => {
      void this.serve(req, res);
    });
    try {
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject);
        http.listen({ host: this.host, port: requested === -1 ? 0 : requested }, () => {
          http.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      throw new Error(`can't listen to the monitor port: ${(err as Error).message}`);
    }
    http.on('error', (err) => {
      this.server.logger.error(`Monitoring listener error: ${err.message}`);
    });
    http.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      else socket.destroy();
    });
    this.http = http;
    const address = http.address();
    this.port = typeof address === 'object' && address !== null ? address.port : requested;
    this.server.logger.info(`Starting http monitor on ${hostPort(this.host, this.port)}`);
  }

  /** Stops listening and drops open HTTP connections. */
  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const http = this.http;
    if (http === null) return;
    await new Promise<void>((resolve) => {
      http.close(() => {
        resolve();
      });
      http.closeAllConnections();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let response: MonitorResponse;
    try {
      response = await this.dispatch(req);
    } catch (err) {
      if (err instanceof BadRequest) {
        response = badRequest(err.message);
      } else {
        this.server.logger.error(
          `Monitoring: error serving ${req.url ?? ''}: ${err instanceof Error ? err.message : String(err)}`,
        );
        response = {
          status: 500,
          contentType: 'application/json',
          body: JSON.stringify({ error: 'internal error' }, null, 2),
        };
      }
    }
    try {
      const body = Buffer.from(response.body, 'utf8');
      const headers: Record<string, string | number> = {
        // An empty type sends no Content-Type (a 204, as /streaming/isFTActive).
        ...(response.contentType !== '' ? { 'Content-Type': response.contentType } : {}),
        ...(response.status !== 204 ? { 'Content-Length': body.length } : {}),
        ...response.headers,
      };
      // As the reference from 2.9.22 on (2.9.10 sends no CORS header at all).
      if (response.contentType.startsWith('application/')) {
        headers['Access-Control-Allow-Origin'] = '*';
      }
      res.writeHead(response.status, headers);
      res.end(body);
    } catch {
      res.destroy();
    }
  }

  private async dispatch(req: IncomingMessage): Promise<MonitorResponse> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    let path: string;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      throw new BadRequest(`invalid URL escape in ${JSON.stringify(rawPath)}`);
    }
    const route = this.routes.get(path);
    if (route === undefined) return notFound();
    this.requestStats.set(route.path, (this.requestStats.get(route.path) ?? 0) + 1);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    return route.handler({
      path: route.path,
      query,
      method: req.method ?? 'GET',
      headers: req.headers,
    });
  }
}
