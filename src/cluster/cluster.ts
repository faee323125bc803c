// The cluster: the route listener, the dialling of routes (configured ones forever,
// learned ones a few times), the handshake (CONNECT and INFO), the registry of one
// route per remote server, gossip (a new route's INFO goes to the other routes, whose
// servers then connect to it, so one seed route is enough to meet the whole mesh),
// this server's interest for the routes, and the client URLs given in INFO. The
// reference's server/route.go is the model; its log lines are kept.

import { randomBytes } from 'node:crypto';
import { connect, createServer, isIP, type Server as NetServer, type Socket } from 'node:net';
import {
  ClientPermissions,
  CompiledPermissions,
  type SubjectPermission,
} from '../auth/permissions.js';
import { BcryptCache } from '../auth/bcrypt-cache.js';
import { checkSecret } from '../auth/users.js';
import { CloseReason, ErrText } from '../protocol/errors.js';
import { sendAsyncInfo } from '../server/async-info.js';
import type { Account } from '../server/account.js';
import type { Client } from '../server/client.js';
import type { ClusterHooks, Server } from '../server/server.js';
import type { Subscription } from '../server/subscription.js';
import { PROTOCOL_VERSION } from '../server/version.js';
import { Fanout } from './fanout.js';
import { parseRemoteInfo, parseRouteConnect, type RemoteInfo, type RouteConnect } from './info.js';
import { Interest, interestLine } from './interest.js';
import { JetStreamApiImport, systemAccountFor } from './js-api.js';
import {
  CONNECT_ERROR_REPORTS,
  ROUTE_CONNECT_DELAY,
  ROUTE_DIAL_TIMEOUT,
  ROUTE_RECONNECT_DELAY,
  ROUTE_RECONNECT_JITTER,
  type ClusterOptions,
  joinHostPort,
  parseRouteUrl,
  type RoutePermissions,
  type RouteUrl,
} from './options.js';
import { Route } from './route.js';
import { RouteTls } from './tls.js';
import { RefCountedUrls, ownConnectUrls } from './urls.js';

/** Service import responses (src/auth/accounts.ts): `_R_.<token>` in the exporter. */
const RESPONSES = '_R_.>';

/** The reference's RouteProtoV2: routes that carry account names. */
const ROUTE_PROTO = 2;

interface Sleeper {
  timer: NodeJS.Timeout;
  wake: () => void;
}

export class Cluster implements ClusterHooks {
  readonly server: Server;
  readonly options: ClusterOptions;
  /** The cluster's name; a drawn one (dynamic) gives way to a configured one. */
  name: string;
  dynamic: boolean;
  /** The route port actually bound. */
  port = 0;
  readonly fanout = new Fanout();
  readonly interest = new Interest();
  /** Registered routes (one per remote server), by rid. */
  readonly routes = new Map<number, Route>();
  /** Registered routes by remote server id. */
  readonly remotes = new Map<string, Route>();
  /** When the client URLs last changed (ms since epoch). */
  urlsChangedAt = 0;
  /**
   * Without JetStream here: the system account's JetStream API, served by other servers
   * of the cluster, imported into this server's accounts (js-api.ts). Null otherwise.
   */
  jsApi: JetStreamApiImport | null = null;

  private readonly connections = new Set<Route>();
  private readonly configured: RouteUrl[] = [];
  private listener: NetServer | null = null;
  private ownUrls: string[] = [];
  /** This server's WebSocket URLs (ws_connect_urls), when it has a WebSocket listener. */
  private ownWsUrls: string[] = [];
  private readonly remoteUrls = new RefCountedUrls();
  private readonly remoteWsUrls = new RefCountedUrls();
  /** connect_urls go into client INFO once a route announced some, as the reference. */
  private advertising = false;
  private stopping = false;
  private ldm = false;
  private readonly sleepers = new Set<Sleeper>();
  private readonly dialing = new Set<Socket>();
  /** Servers (by id) being dialled because another server told of them. */
  private readonly implicitPending = new Set<string>();
  /** Configured URLs that turned out to be this server. */
  private readonly selfUrls = new Set<string>();
  private readonly bcrypt = new BcryptCache();
  private importPerms: ClientPermissions | null;
  private exportPerms: ClientPermissions | null;
  /** TLS on route connections (`cluster { tls }`), for connections made from now on. */
  tls: RouteTls | null;
  /**
   * The first host name among the configured routes: a route dialled by IP address
   * (learned by gossip) checks the certificate for it (the reference's routeTLSName).
   */
  tlsName = '';

  constructor(server: Server, options: ClusterOptions) {
    this.server = server;
    this.options = options;
    this.dynamic = options.name === '';
    this.name = this.dynamic ? randomName() : options.name;
    for (const text of options.routes) {
      const u = parseRouteUrl(text);
      if (typeof u === 'string') throw new Error(u);
      if (!this.configured.some((c) => c.hostPort === u.hostPort)) this.configured.push(u);
      if (this.tlsName === '' && isIP(u.host) === 0) this.tlsName = u.host;
    }
    this.tls = options.tls === null ? null : new RouteTls(options.tls);
    this.importPerms = importTester(options.permissions?.import);
    this.exportPerms = exportTester(options.permissions?.export);
    // Subscriptions made before the cluster joined count too (in-process ones).
    for (const account of server.accounts.values()) {
      account.sublist.forEach((sub) => {
        if (sub.route === null) this.interest.update(account.name, sub.subject, sub.queue, 1);
      });
      // A service import sends requests into the exporting account with a fresh
      // `_R_.` reply, and only this server knows where its response goes back to: an
      // account with imports or exports wants its responses from every server
      // (routed back in deliverRouted).
      if (account.links !== null) this.interest.update(account.name, RESPONSES, null, 1);
    }
    server.cluster = this;
    server.onShutdown(() => this.shutdown());
    // A reload may replace or add accounts: what each route found by name is looked up
    // again (the effects of a reload run together, before any message is read).
    server.reloadHooks.push({
      name: 'route-accounts',
      prepare: () => () => {
        for (const r of this.connections) r.forgetAccount();
      },
    });
  }

  isStopping(): boolean {
    return this.stopping;
  }

  get authRequired(): boolean {
    return this.options.user !== '';
  }

  /** Opens the route listener and starts dialling the configured routes. */
  async start(): Promise<void> {
    const server = this.server;
    const o = this.options;
    const so = server.options;
    this.ownUrls = ownConnectUrls(so.host, server.port, so.clientAdvertise);
    const ws = server.sideListeners.get('websocket');
    if (ws !== undefined) this.ownWsUrls = ownConnectUrls(ws.host, ws.port, ws.advertise);
    server.logger.info(`Cluster name is ${this.name}`);
    if (this.dynamic)
      server.logger.warn('Cluster name was dynamically generated, consider setting one');
    const listener = createServer({ noDelay: true }, (socket) => {
      this.accept(socket);
    });
    this.listener = listener;
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ host: o.host, port: o.port <= 0 ? 0 : o.port, backlog: 1024 }, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    listener.on('error', (err) => {
      server.logger.error(`Route listener error: ${err.message}`);
    });
    const address = listener.address();
    this.port = typeof address === 'object' && address !== null ? address.port : o.port;
    server.logger.info(`Listening for route connections on ${joinHostPort(o.host, this.port)}`);
    this.importJetStreamApi();
    for (const u of this.configured) void this.connect(u, true, true);
  }

  /**
   * A server without JetStream reaches the cluster's through the system account, as
   * nats-server does (js-api.ts); the accounts that have it follow config reloads.
   */
  private importJetStreamApi(): void {
    const server = this.server;
    if (server.jetstream !== null) return;
    const system = systemAccountFor(server);
    if (system === null) return;
    const api = new JetStreamApiImport(server, system, this);
    this.jsApi = api;
    api.sync();
    server.reloadHooks.push({
      name: 'jetstream-api-import',
      // Once every layer's work ran: the security layer puts the new accounts in place.
      prepare: () => () => {
        queueMicrotask(() => {
          if (!this.stopping) api.sync();
        });
      },
    });
  }

  /** The account a route names: one of the server's, or the system account of js-api.ts. */
  accountNamed(name: string): Account | undefined {
    const a = this.server.accounts.get(name);
    if (a !== undefined) return a;
    const api = this.jsApi;
    return api !== null && api.system.name === name ? api.system : undefined;
  }

  private accept(socket: Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    const route = new Route(this, socket, null, false);
    this.connections.add(route);
    route.begin();
  }

  // ---- what this server says --------------------------------------------------------

  /** The route INFO line, as the reference's routeInfo (field order of its Info struct). */
  infoLine(extra: { ldm?: boolean } = {}): Buffer {
    const server = this.server;
    const o = this.options;
    let host = o.host;
    let port = this.port;
    let ip = '';
    if (o.advertise !== '') {
      const adv = splitAdvertise(o.advertise, this.port);
      host = adv.host;
      port = adv.port;
      ip = `nats-route://${joinHostPort(host, port)}/`;
    }
    const info: Record<string, unknown> = {
      server_id: server.id,
      server_name: server.name,
      version: PROTOCOL_VERSION,
      proto: ROUTE_PROTO,
      go: process.version,
      host,
      port,
      headers: !server.options.noHeaderSupport,
    };
    if (this.authRequired) info.auth_required = true;
    if (this.tls !== null) {
      // As the reference: cluster TLS always verifies the other side.
      info.tls_required = true;
      info.tls_verify = true;
    }
    info.max_payload = server.options.maxPayload;
    if (ip !== '') info.ip = ip;
    info.cluster = this.name;
    if (this.dynamic) info.cluster_dynamic = true;
    if (!o.noAdvertise && this.ownUrls.length > 0) info.connect_urls = this.ownUrls;
    if (!o.noAdvertise && this.ownWsUrls.length > 0) info.ws_connect_urls = this.ownWsUrls;
    if (extra.ldm === true) info.ldm = true;
    if (o.permissions?.import != null) info.import = o.permissions.import;
    if (o.permissions?.export != null) info.export = o.permissions.export;
    return Buffer.from(`INFO ${JSON.stringify(info)} \r\n`, 'utf8');
  }

  /** The CONNECT a dialling server sends first, as the reference's sendRouteConnect. */
  connectLine(url: RouteUrl): Buffer {
    const c: Record<string, unknown> = { echo: true, verbose: false, pedantic: false };
    if (url.user !== '') c.user = url.user;
    if (url.password !== '') c.pass = url.password;
    c.tls_required = this.tls !== null;
    c.headers = !this.server.options.noHeaderSupport;
    c.name = this.server.id;
    c.cluster = this.name;
    if (this.dynamic) c.cluster_dynamic = true;
    return Buffer.from(`CONNECT ${JSON.stringify(c)}\r\n`, 'utf8');
  }

  // ---- the handshake ----------------------------------------------------------------

  /** Parses a CONNECT on an accepted route; null (after closing it) when unusable. */
  parseConnect(route: Route, json: Record<string, unknown>): RouteConnect | null {
    const c = parseRouteConnect(json);
    if (typeof c === 'string') {
      this.server.logger.error(`${route.label()} - Route CONNECT: ${c}`);
      route.close(CloseReason.parseError, ErrText.parserError);
      return null;
    }
    return c;
  }

  /** The cluster credentials check (as the reference, before anything else in CONNECT). */
  authenticate(c: RouteConnect): boolean | Promise<boolean> {
    const o = this.options;
    if (!this.authRequired) return true;
    if (c.user !== o.user) return false;
    return checkSecret(o.password, c.pass, this.bcrypt);
  }

  authFailed(route: Route): void {
    this.server.logger.error(`${route.label()} - authentication error`);
    route.close(CloseReason.authFailure, ErrText.authViolation);
  }

  /** The rest of CONNECT once authenticated (processRouteConnect); false when it closed the route. */
  acceptConnect(route: Route, c: RouteConnect): boolean {
    const logger = this.server.logger;
    // Clients set lang in CONNECT, servers never do.
    if (c.lang !== '') {
      logger.error(`${route.label()} - ${ErrText.routePort}`);
      route.close(CloseReason.wrongPort, ErrText.routePort);
      return false;
    }
    if (c.gateway !== '') {
      const text = `Rejecting connection from gateway "${c.gateway}" on the Route port`;
      logger.error(`${route.label()} - ${text}`);
      route.close('Wrong Gateway', text);
      return false;
    }
    if (c.cluster !== this.name) {
      if (this.dynamic && (!c.dynamic || this.name < c.cluster)) {
        this.adoptName(c.cluster, c.dynamic, route);
      } else {
        const text = `Rejecting connection, cluster name "${c.cluster}" does not match "${this.name}"`;
        logger.error(`${route.label()} - ${text}`);
        route.close(CloseReason.clusterNameConflict, text);
        return false;
      }
    }
    route.remoteId = c.name;
    route.headers = !this.server.options.noHeaderSupport && c.headers;
    return true;
  }

  /** Takes another server's cluster name, dropping the routes made under ours. */
  private adoptName(name: string, dynamic: boolean, keep: Route): void {
    this.server.logger.info(`Cluster name updated to ${name}`);
    this.name = name;
    this.dynamic = dynamic;
    for (const r of [...this.connections]) {
      if (r !== keep) r.close(CloseReason.clusterNameConflict);
    }
  }

  onInfo(route: Route, text: string): void {
    const info = parseRemoteInfo(text);
    if (typeof info === 'string') {
      this.server.logger.error(`${route.label()} - Route INFO: ${info}`);
      route.close(CloseReason.parseError, ErrText.parserError);
      return;
    }
    if (route.infoReceived) this.laterInfo(route, info);
    else this.firstInfo(route, info);
  }

  /** The other server introduces itself (processRouteInfo). */
  private firstInfo(route: Route, info: RemoteInfo): void {
    const server = this.server;
    if (info.id === server.id) {
      // A configured route that leads back here: never dialled again.
      route.remoteId = info.id;
      if (route.url !== null) this.selfUrls.add(route.url.hostPort);
      route.close(CloseReason.duplicateRoute);
      return;
    }
    if (info.cluster !== '' && info.cluster !== this.name) {
      if (this.dynamic && (!info.dynamic || this.name < info.cluster)) {
        this.adoptName(info.cluster, info.dynamic, route);
      } else {
        route.close(CloseReason.clusterNameConflict);
        return;
      }
    }
    if (!route.didSolicit && info.name === server.name) {
      server.logger.error(`${route.label()} - Remote server has a duplicate name: "${info.name}"`);
      route.close(CloseReason.duplicateServerName);
      return;
    }
    route.infoReceived = true;
    route.remoteId = info.id;
    route.remoteName = info.name;
    route.headers = !server.options.noHeaderSupport && info.headers;
    if (route.url === null) {
      const u = parseRouteUrl(`nats-route://${joinHostPort(info.host, info.port)}/`);
      if (typeof u === 'string') {
        server.logger.error(`${route.label()} - Error parsing URL from INFO: ${u}`);
        route.close(CloseReason.parseError);
        return;
      }
      route.url = u;
    }
    const existing = this.remotes.get(info.id);
    if (existing !== undefined) {
      // Both servers dialled each other: keep the route registered first. The one
      // kept reconnects if it goes, in case the other side kept the other one.
      if (server.logger.debugEnabled) {
        server.logger.debug(`${route.label()} - Detected duplicate remote route "${info.id}"`);
      }
      if (route.didSolicit && !existing.didSolicit) {
        existing.didSolicit = true;
        existing.url = route.url;
        existing.explicit = route.explicit;
      }
      existing.retry = true;
      route.close(CloseReason.duplicateRoute);
      return;
    }
    route.registered = true;
    route.remoteExport = exportJson(info.raw.export);
    this.routes.set(route.rid, route);
    this.remotes.set(info.id, route);
    if (server.logger.debugEnabled) {
      server.logger.debug(`${route.label()} - Registering remote route "${info.id}"`);
    }
    this.sendSubs(route);
    if (this.routes.size > 1) this.forwardInfo(route, info);
    if (!this.options.noAdvertise) {
      route.connectUrls = info.connectUrls;
      route.wsConnectUrls = info.wsConnectUrls;
      this.addUrls(info.connectUrls, info.wsConnectUrls);
    }
  }

  /** An INFO after the first: news of another server, or this one going lame duck. */
  private laterInfo(route: Route, info: RemoteInfo): void {
    if (info.id !== route.remoteId) {
      this.implicitRoute(info);
      return;
    }
    if (!info.ldm) {
      // Its config was reloaded: what it may export now decides what it wants to hear.
      this.remoteExportChanged(route, info.raw.export);
      return;
    }
    if (!this.options.noAdvertise) {
      const urls = route.connectUrls;
      const ws = route.wsConnectUrls;
      route.connectUrls = [];
      route.wsConnectUrls = [];
      this.removeUrls(urls, ws);
    }
  }

  /**
   * Another server's INFO names new export permissions: the interest it dropped
   * before and may take now is sent to it again (the reference's
   * updateRemoteRoutePerms).
   */
  private remoteExportChanged(route: Route, exported: unknown): void {
    const json = exportJson(exported);
    if (json === route.remoteExport) return;
    const before = exportTester(permissionOf(route.remoteExport));
    const after = exportTester(permissionOf(json));
    route.remoteExport = json;
    for (const change of this.interest.all()) {
      const s = change.subject;
      if (canExport(after, s) && !canExport(before, s) && this.canImport(s)) {
        route.sendProto(interestLine(change));
      }
    }
  }

  /** Tells the other routes about a new one, so their servers connect to it. */
  private forwardInfo(route: Route, info: RemoteInfo): void {
    const raw: Record<string, unknown> = { ...info.raw };
    delete raw.nonce;
    if (info.ip === '') raw.ip = `nats-route://${joinHostPort(route.ip, info.port)}/`;
    const line = Buffer.from(`INFO ${JSON.stringify(raw)}\r\n`, 'utf8');
    for (const r of this.routes.values())
      if (r !== route && r.remoteId !== info.id) r.sendProto(line);
  }

  /** Connects to a server another one told of, unless connected or configured. */
  private implicitRoute(info: RemoteInfo): void {
    const server = this.server;
    if (info.id === server.id || this.remotes.has(info.id) || this.implicitPending.has(info.id)) {
      return;
    }
    const hp = joinHostPort(info.host, info.port).toLowerCase();
    if (this.configured.some((u) => u.hostPort === hp)) return;
    const u = parseRouteUrl(info.ip);
    if (typeof u === 'string') {
      server.logger.error(`Error parsing URL from INFO: ${u}`);
      return;
    }
    const url: RouteUrl = info.authRequired
      ? { ...u, user: this.options.user, password: this.options.password }
      : u;
    this.implicitPending.add(info.id);
    void this.connect(url, false, true).finally(() => {
      this.implicitPending.delete(info.id);
    });
  }

  // ---- interest -------------------------------------------------------------------

  localInterest(account: Account, sub: Subscription, delta: number): void {
    if (sub.route !== null) return;
    this.interestChanged(account, sub.subject, sub.queue, delta);
  }

  /** Interest of this server's own, without a subscription (js-api.ts's responses). */
  announce(account: Account, subject: string): void {
    this.interestChanged(account, subject, null, 1);
  }

  private interestChanged(
    account: Account,
    subject: string,
    queue: string | null,
    delta: number,
  ): void {
    const change = this.interest.update(account.name, subject, queue, delta);
    if (change === null || this.routes.size === 0 || !this.canImport(subject)) return;
    const line = interestLine(change);
    for (const r of this.routes.values()) r.sendProto(line);
  }

  /** All of this server's interest, to a route that just registered. */
  private sendSubs(route: Route): void {
    for (const change of this.interest.all()) {
      if (this.canImport(change.subject)) route.sendProto(interestLine(change));
    }
    if (this.server.logger.debugEnabled) {
      this.server.logger.debug(`${route.label()} - Sent local subscriptions to route`);
    }
  }

  /** cluster permissions import: the subjects this server takes from the others. */
  canImport(subject: string): boolean {
    return canImport(this.importPerms, subject);
  }

  /** cluster permissions export: the subjects the other servers may take from this one. */
  canExport(subject: string): boolean {
    return canExport(this.exportPerms, subject);
  }

  // ---- a config reload (reload.ts) ----------------------------------------------------

  /** Takes new route permissions; returns the import permissions they replace. */
  setPermissions(perms: RoutePermissions | null): ClientPermissions | null {
    const before = this.importPerms;
    this.importPerms = importTester(perms?.import);
    this.exportPerms = exportTester(perms?.export);
    return before;
  }

  /** The configured routes are now `urls`: new ones are dialled, dropped ones no longer. */
  setConfiguredRoutes(urls: readonly RouteUrl[]): void {
    const added = urls.filter((u) => !this.isConfigured(u));
    this.configured.length = 0;
    this.tlsName = '';
    for (const u of urls) {
      this.configured.push(u);
      if (this.tlsName === '' && isIP(u.host) === 0) this.tlsName = u.host;
    }
    for (const u of added) void this.connect(u, true, true);
  }

  // ---- client URLs and INFO ------------------------------------------------------------

  clientInfo(info: Record<string, unknown>, ldm: boolean): void {
    info.cluster = this.name;
    const lameDuck = ldm || this.ldm || this.server.lameDuck;
    if (!this.advertising && !lameDuck) return;
    // In lame duck mode only the other servers are worth reconnecting to.
    const urls = lameDuck ? [] : [...this.ownUrls];
    if (!this.options.noAdvertise) for (const u of this.remoteUrls.list()) urls.push(u);
    if (urls.length > 0) info.connect_urls = urls;
  }

  /** connect_urls for WebSocket clients (ws_connect_urls of the other servers). */
  wsConnectUrls(): string[] {
    return this.remoteWsUrls.list();
  }

  wsClientUrls(ldm: boolean): string[] | null {
    const lameDuck = ldm || this.ldm || this.server.lameDuck;
    if (!this.advertising && !lameDuck) return null;
    const urls = lameDuck ? [] : [...this.ownWsUrls];
    if (!this.options.noAdvertise) for (const u of this.remoteWsUrls.list()) urls.push(u);
    return urls.length > 0 ? urls : null;
  }

  afterFirstPong(c: Client): void {
    if (c.kind !== 'client' || c.protocol < 1) return;
    const started = c.start.getTime();
    // One INFO is enough when a reload changed max_payload too (async-info.ts sent it).
    if (this.urlsChangedAt >= started && this.server.maxPayloadChangedAt < started) {
      c.send(this.server.infoFor(c));
    }
  }

  lameDuck(): void {
    if (this.ldm) return;
    this.ldm = true;
    const line = this.infoLine({ ldm: true });
    for (const r of this.routes.values()) r.sendProto(line);
  }

  private addUrls(urls: readonly string[], ws: readonly string[]): void {
    let changed = false;
    for (const u of urls) if (this.remoteUrls.add(u)) changed = true;
    for (const u of ws) if (this.remoteWsUrls.add(u)) changed = true;
    if (changed) this.urlsChanged();
  }

  private removeUrls(urls: readonly string[], ws: readonly string[]): void {
    let changed = false;
    for (const u of urls) if (this.remoteUrls.remove(u)) changed = true;
    for (const u of ws) if (this.remoteWsUrls.remove(u)) changed = true;
    if (changed) this.urlsChanged();
  }

  private urlsChanged(): void {
    this.advertising = true;
    this.urlsChangedAt = Date.now();
    // As the reference: no INFO while shutting down, or clients would forget the
    // servers they are about to need.
    if (!this.stopping && !this.server.shuttingDown) sendAsyncInfo(this.server);
  }

  // ---- dialling -------------------------------------------------------------------

  private isConfigured(url: RouteUrl): boolean {
    return this.configured.some((u) => u.hostPort === url.hostPort);
  }

  /** Dials a route until it connects: forever when configured, else connect_retries more times. */
  private async connect(url: RouteUrl, explicit: boolean, firstConnect: boolean): Promise<void> {
    const logger = this.server.logger;
    let attempts = 0;
    while (!this.stopping) {
      if (this.selfUrls.has(url.hostPort)) return;
      if (explicit && !this.isConfigured(url)) return;
      let socket: Socket;
      try {
        if (logger.debugEnabled) logger.debug(`Trying to connect to route on ${url.hostPort}`);
        socket = await this.dial(url);
      } catch (err) {
        attempts++;
        const text = `Error trying to connect to route (attempt ${attempts}): ${dialError(err, url)}`;
        const report = attempts === 1 || (firstConnect && attempts % CONNECT_ERROR_REPORTS === 0);
        if (report || !firstConnect) logger.error(text);
        else logger.debug(text);
        if (
          !explicit &&
          (this.options.connectRetries <= 0 || attempts > this.options.connectRetries)
        ) {
          return;
        }
        if (!(await this.sleep(ROUTE_CONNECT_DELAY))) return;
        continue;
      }
      // The cluster may have shut down while the dial was under way.
      if (this.isStopping()) {
        socket.destroy();
        return;
      }
      const route = new Route(this, socket, url, explicit);
      this.connections.add(route);
      route.begin();
      return;
    }
  }

  private dial(url: RouteUrl): Promise<Socket> {
    return new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: url.host, port: url.port });
      this.dialing.add(socket);
      const done = (): void => {
        clearTimeout(timer);
        this.dialing.delete(socket);
        socket.off('connect', onConnect);
        socket.off('error', onError);
      };
      const onConnect = (): void => {
        done();
        resolve(socket);
      };
      const onError = (err: Error): void => {
        done();
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(() => {
        onError(new Error('i/o timeout'));
      }, ROUTE_DIAL_TIMEOUT);
      socket.once('connect', onConnect);
      socket.once('error', onError);
    });
  }

  /** Resolves true after ms, or false at once when the cluster shuts down meanwhile. */
  private sleep(ms: number): Promise<boolean> {
    if (this.stopping) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const s: Sleeper = {
        timer: setTimeout(() => {
          this.sleepers.delete(s);
          resolve(!this.stopping);
        }, ms),
        wake: () => {
          clearTimeout(s.timer);
          resolve(false);
        },
      };
      this.sleepers.add(s);
    });
  }

  /** A route went away: the registry, its URLs, and perhaps a reconnect. */
  routeClosed(route: Route, reason: string): void {
    const logger = this.server.logger;
    this.connections.delete(route);
    logger.info(`${route.label()} - Router connection closed: ${reason}`);
    if (route.registered) {
      route.registered = false;
      this.routes.delete(route.rid);
      if (this.remotes.get(route.remoteId) === route) this.remotes.delete(route.remoteId);
      if (route.connectUrls.length > 0 || route.wsConnectUrls.length > 0) {
        this.removeUrls(route.connectUrls, route.wsConnectUrls);
      }
    }
    if (this.stopping || this.server.shuttingDown || route.noReconnect) return;
    const retryImplicit = route.retry || (route.didSolicit && !route.explicit);
    if (!route.didSolicit && !retryImplicit) return;
    const url = route.url;
    if (url === null) return;
    if (route.remoteId !== '' && this.remotes.has(route.remoteId)) {
      if (logger.debugEnabled) {
        logger.debug(
          `Not attempting reconnect for solicited route, already connected to "${route.remoteId}"`,
        );
      }
      return;
    }
    if (route.remoteId === this.server.id) return;
    if (logger.debugEnabled)
      logger.debug(`Attempting reconnect for solicited route "${url.redacted}"`);
    const delay =
      Math.floor(Math.random() * ROUTE_RECONNECT_JITTER) +
      (route.explicit ? ROUTE_RECONNECT_DELAY : 0);
    const explicit = route.explicit;
    void this.sleep(delay).then((go) => {
      if (go) void this.connect(url, explicit, false);
    });
  }

  // ---- shutdown -------------------------------------------------------------------

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.jsApi?.close();
    for (const s of this.sleepers) s.wake();
    this.sleepers.clear();
    for (const socket of this.dialing) socket.destroy();
    this.dialing.clear();
    for (const r of [...this.connections]) r.close(CloseReason.serverShutdown);
    const listener = this.listener;
    if (listener !== null)
      await new Promise<void>((resolve) =>
        listener.close(() => {
          resolve();
        }),
      );
  }

  /** Every route connection, registered or not (monitoring, tests). */
  allConnections(): Route[] {
    return [...this.connections];
  }
}

/** A tester of `cluster { permissions { import } }`, null for none. */
export function importTester(p: SubjectPermission | null | undefined): ClientPermissions | null {
  return p != null ? new ClientPermissions(new CompiledPermissions({ publish: p })) : null;
}

/** A tester of `cluster { permissions { export } }`, null for none. */
export function exportTester(p: SubjectPermission | null | undefined): ClientPermissions | null {
  return p != null ? new ClientPermissions(new CompiledPermissions({ subscribe: p })) : null;
}

export function canImport(t: ClientPermissions | null, subject: string): boolean {
  return t === null || t.checkPublish(subject) === null;
}

export function canExport(t: ClientPermissions | null, subject: string): boolean {
  return t === null || t.checkSubscribe(subject, null) === null;
}

/** A route INFO's `export` as JSON, '' for none. */
function exportJson(v: unknown): string {
  return v === undefined || v === null ? '' : JSON.stringify(v);
}

/** A SubjectPermission from exportJson's text; null for none. */
function permissionOf(json: string): SubjectPermission | null {
  if (json === '') return null;
  const o = JSON.parse(json) as unknown;
  if (typeof o !== 'object' || o === null) return null;
  const r = o as Record<string, unknown>;
  const list = (x: unknown): string[] | null =>
    Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : null;
  return { allow: list(r.allow), deny: list(r.deny) };
}

/** A random cluster name when none is configured (the reference draws a NUID). */
function randomName(): string {
  return randomBytes(16).toString('base64url').replace(/[-_]/g, 'X').substring(0, 22).toUpperCase();
}

function splitAdvertise(advertise: string, port: number): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(advertise);
  if (m === null) return { host: advertise, port };
  return { host: m[1] ?? m[2] ?? advertise, port: m[3] === undefined ? port : Number(m[3]) };
}

/** A dial error in the reference's words where it has them. */
function dialError(err: unknown, url: RouteUrl): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ECONNREFUSED') return `dial tcp ${url.hostPort}: connect: connection refused`;
  return e.message;
}
