// The SQL store (PostgreSQL or MySQL/MariaDB, in the reference's tables).
export { insertRowsLimit, SqlStore, type SqlStoreOptions } from './store.js';
export { DEFAULT_LOCK_TIMING, type LockTiming } from './lock.js';
export { SCHEMA_VERSION } from './schema.js';
export { parseDriver, type SqlDriver } from './db.js';
