// The streaming store layer: the Store interface, limits, the memory and file stores.
export * from './types.js';
export * from './errors.js';
export * from './limits.js';
export * from './limits-json.js';
export { makeStoredMsg } from './message.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.js';
export { FileStore } from './file.js';
export {
  DEFAULT_FILE_STORE_TUNING,
  type FileStoreOptions,
  type FileStoreTuning,
} from './file-options.js';
export { FileStoreError, type FileStoreErrorCode } from './file-record.js';
