// The streaming store layer: the Store interface, limits, and the memory store.
export * from './types.js';
export * from './errors.js';
export * from './limits.js';
export * from './limits-json.js';
export { makeStoredMsg } from './message.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.js';
