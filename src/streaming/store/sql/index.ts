// The SQL (PostgreSQL) store.
export { SqlStore, type SqlStoreOptions } from './store.js';
export { DEFAULT_LOCK_TIMING, type LockTiming } from './lock.js';
export { SCHEMA_VERSION } from './schema.js';
