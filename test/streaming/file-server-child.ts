// A server with streaming on the FILE store, run as a child process by the kill -9
// tests (and usable by hand for benchmarks):
//
//   node dist/test/streaming/file-server-child.js '{"port":0,"dir":"/tmp/d","fileOptions":{"sync":false}}'
//
// Prints `READY <port>` on stdout once clients can connect, or `ERROR <message>` and
// exits 3 if the streaming server cannot start (the tests check the message).
import { attachMonitor } from '../../src/monitor/index.js';
import { Server } from '../../src/server/server.js';
import { startStreaming } from '../../src/streaming/attach.js';
import type { StreamingOptions } from '../../src/streaming/options.js';

interface ChildOptions {
  readonly port?: number;
  /** Monitoring port (/streaming/*), off when absent. */
  readonly httpPort?: number;
  readonly dir: string;
  readonly streaming?: Partial<StreamingOptions>;
  readonly fileOptions?: StreamingOptions['fileOptions'];
}

const o = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const server = new Server({
  host: '127.0.0.1',
  port: o.port ?? 0,
  httpPort: o.httpPort ?? 0,
  quiet: true,
});
const monitor = attachMonitor(server);
await server.start();
try {
  await startStreaming(server, monitor, {
    ...o.streaming,
    // MEMORY only to compare with (benchmarks).
    storeType: o.streaming?.storeType ?? 'FILE',
    dir: o.dir,
    fileOptions: o.fileOptions ?? {},
  });
} catch (err) {
  process.stdout.write(`ERROR ${err instanceof Error ? err.message : String(err)}\n`);
  await server.close();
  process.exit(3);
}
process.stdout.write(`READY ${server.port}\n`);
process.once('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
