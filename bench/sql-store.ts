// The SQL store alone, without NATS: messages stored in batches of BATCH with one
// flush each (as the streaming server does per event-loop turn), against a private
// PostgreSQL with fsync on, or MariaDB (DRIVER=mysql) flushing its log at each commit
// (or SQL_SOURCE). Shows what the store and the database cost per message, apart
// from the protocol. SIZE sets the payload size (128).
//
//   npm run build && node dist/bench/sql-store.js
import { SqlStore, type SqlDriver } from '../src/streaming/store/sql/index.js';
import { startMariaDb } from '../test/helpers/mariadb.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { readInOrder, storeInBatches } from './store-load.js';
import { formatRate } from './timing.js';

const N = Number(process.env.N ?? '200000');
const BATCH = Number(process.env.BATCH ?? '1024');
const data = Buffer.alloc(Number(process.env.SIZE ?? '128'), 0x61);
const driver: SqlDriver = process.env.DRIVER === 'mysql' ? 'mysql' : 'postgres';

let source = process.env.SQL_SOURCE ?? '';
if (source === '') {
  const db =
    driver === 'mysql'
      ? await startMariaDb({ durable: true })
      : await startPostgres({ fsync: true });
  if (typeof db === 'string') {
    console.log(`sql store: skipped (${db})`);
    process.exit(0);
  }
  source = await db.createDatabase();
}
const store = new SqlStore({ driver, source, limits: { maxMsgs: 0, maxBytes: 0 } });
await store.recover();
const { msgs } = store.createChannel('bench');
await store.flush();
const start = performance.now();
await storeInBatches(store, msgs, N, BATCH, data);
const ms = performance.now() - start;
console.log(
  `sql store (${driver}): ${formatRate((N * 1000) / ms)} msgs/s stored and committed (${N} msgs of ${data.length} B, batches of ${BATCH}, ${(ms / 1000).toFixed(2)} s)`,
);
const readStart = performance.now();
await readInOrder(msgs, N);
const readMs = performance.now() - readStart;
console.log(`sql store: ${formatRate((N * 1000) / readMs)} msgs/s read back in sequence order`);
await store.close();
process.exit(0);
