// The embedding API: `await startServer({ port: 0 })` gives a running server.

import type { ServerOptions } from './config/options.js';
import { attachMonitor, type Monitor } from './monitor/index.js';
import { Server } from './server/server.js';
import type { SecurityOptions } from './auth/options.js';
import { attachSecurity } from './auth/security.js';
import type { StreamingOptions } from './streaming/options.js';
import type { StreamingServer } from './streaming/server.js';
import { attachCluster } from './cluster/attach.js';
import type { Cluster } from './cluster/cluster.js';
import type { ClusterOptions } from './cluster/options.js';
import type { JetStream } from './jetstream/jetstream.js';
import type { JetStreamOptions } from './jetstream/options.js';
import type { WebsocketListener } from './websocket/listener.js';
import type { WebsocketOptions } from './websocket/options.js';

export type { ServerOptions } from './config/options.js';
export { Server } from './server/server.js';
export { attachSecurity, Security, SecurityConfigError } from './auth/security.js';
export { reloadSecurity } from './auth/reload.js';
export type {
  AccountConfig,
  ExportConfig,
  ImportConfig,
  PermissionsConfig,
  SecurityOptions,
  TlsOptions,
  UserConfig,
} from './auth/options.js';
export { WIREBUS_VERSION, PROTOCOL_VERSION } from './server/version.js';
export { ReloadError, type ReloadContext, type ReloadHook } from './server/reload.js';
export {
  Monitor,
  attachMonitor,
  type MonitorHandler,
  type MonitorRequest,
  type MonitorResponse,
} from './monitor/index.js';

// Values only from the light module: the streaming layer itself loads when asked for.
export type { StreamingServer } from './streaming/server.js';
export type { StreamingOptions } from './streaming/options.js';
export { StreamingStartError, STREAMING_VERSION } from './streaming/start-error.js';

export { Cluster } from './cluster/cluster.js';
export type { ClusterOptions, RoutePermissions } from './cluster/options.js';
export type { RouteTlsOptions } from './cluster/tls.js';
export { reloadCluster } from './cluster/reload.js';
export type { WebsocketOptions, WebsocketTlsOptions } from './websocket/options.js';
export type { WebsocketListener } from './websocket/listener.js';

export type { JetStream } from './jetstream/jetstream.js';
export type { JetStreamOptions } from './jetstream/options.js';

export type StartOptions = Partial<ServerOptions> & {
  /**
   * Authentication, accounts, permissions and TLS, as the reference's authorization,
   * accounts, no_auth_user, operator/resolver and tls settings, e.g.
   * `{ users: [{ user: 'a', password: 'b' }] }`.
   */
  security?: SecurityOptions;
  /** Runs the streaming layer too (true for the defaults), e.g. `{ clusterId: 'c' }`. */
  streaming?: Partial<StreamingOptions> | boolean;
  /**
   * Joins a cluster: opens a route port (`port` 0 for a free one) and connects to
   * `routes`, e.g. `{ name: 'c1', port: 0, routes: ['nats-route://127.0.0.1:6222'] }`.
   */
  cluster?: Partial<ClusterOptions>;
  /**
   * Runs JetStream: `true` keeps every stream in memory (no directory needed);
   * `{ storeDir }` keeps file streams under that directory, e.g.
   * `{ storeDir: '/tmp/js', maxMemoryStore: 1 << 30 }`.
   */
  jetstream?: Partial<JetStreamOptions> | boolean;
  /**
   * Opens the WebSocket listener, as the reference's websocket block, e.g.
   * `{ port: 0, noTls: true }` (`port` 0 for a free one; TLS with `tls`).
   */
  websocket?: Partial<WebsocketOptions>;
};

export interface RunningServer {
  /** The client port actually bound. */
  readonly port: number;
  /** `nats://host:port` for clients. */
  readonly url: string;
  readonly server: Server;
  /** The HTTP monitor when `httpPort` was set, else null; register() adds endpoints. */
  readonly monitor: Monitor | null;
  /** The monitoring port actually bound; 0 when monitoring is off. */
  readonly httpPort: number;
  /** The streaming server when `streaming` was given, else null. */
  readonly streaming: StreamingServer | null;
  /** The cluster layer when `cluster` was given, else null; `cluster.port` is the route port. */
  readonly cluster: Cluster | null;
  /** The JetStream engine when `jetstream` was given, else null. */
  readonly jetstream: JetStream | null;
  /** The WebSocket listener when `websocket` was given, else null; `websocket.port` is its port. */
  readonly websocket: WebsocketListener | null;
  close(): Promise<void>;
}

/**
 * Starts a server and resolves once its listener accepts connections. Embedded
 * servers log nothing unless a log file, debug or trace is asked for.
 */
export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const {
    streaming: streamingOptions,
    cluster: clusterOptions,
    jetstream: jetstreamOptions,
    websocket: websocketOptions,
    ...coreOptions
  } = options;
  const quiet =
    options.quiet ??
    !(options.debug === true || options.trace === true || (options.logFile ?? '') !== '');
  const { security, ...serverOptions } = coreOptions;
  // Streaming against an external NATS server (natsServer) needs no client listener.
  const external =
    typeof streamingOptions === 'object' && (streamingOptions.natsServer ?? '') !== '';
  const server = new Server({
    ...serverOptions,
    quiet,
    clientListener: serverOptions.clientListener ?? !external,
  });
  if (security !== undefined) attachSecurity(server, security);
  const monitor = attachMonitor(server);
  const cluster = clusterOptions === undefined ? null : attachCluster(server, clusterOptions);
  let jetstream: JetStream | null = null;
  if (jetstreamOptions !== undefined && jetstreamOptions !== false) {
    // Loaded only when asked for, as the streaming layer: JetStream off costs nothing.
    const { startJetStream } = await import('./jetstream/attach.js');
    const jsOptions = jetstreamOptions === true ? {} : jetstreamOptions;
    server.jetstreamRequested = true;
    server.onStart(async () => {
      jetstream = await startJetStream(server, jsOptions);
    });
  }
  let websocket: WebsocketListener | null = null;
  if (websocketOptions !== undefined) {
    // Loaded only when asked for: it brings Node's HTTP(S) server and zlib.
    const { attachWebsocket } = await import('./websocket/attach.js');
    websocket = attachWebsocket(server, websocketOptions);
  }
  try {
    await server.start();
    await cluster?.start();
  } catch (err) {
    await server.close();
    throw err;
  }
  let streaming: StreamingServer | null = null;
  if (streamingOptions !== undefined && streamingOptions !== false) {
    try {
      // Loaded only when asked for: the streaming layer is about 13 MB of a
      // process's memory (protobuf code, stores, the PostgreSQL client).
      const { startStreaming } = await import('./streaming/attach.js');
      streaming = await startStreaming(
        server,
        monitor,
        streamingOptions === true ? {} : streamingOptions,
      );
    } catch (err) {
      await server.close();
      throw err;
    }
  }
  return {
    port: server.port,
    url: server.url,
    server,
    monitor,
    httpPort: monitor?.port ?? 0,
    streaming,
    cluster,
    jetstream,
    websocket,
    close: () => server.close(),
  };
}
