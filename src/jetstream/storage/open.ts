// Chooses the provider of a stream's storage: memory streams always use the memory
// store; file streams use the server's file storage when it has a store_dir, else
// (an embedded server started with `jetstream: true`) the memory store.

import type { FileStorage } from './file.js';
import { MemoryStoreProvider } from './memory.js';
import type { StorageType, StreamStoreProvider } from './types.js';

/** Opens the provider for one account's streams of one storage type. */
export function openProvider(
  storage: StorageType,
  files: FileStorage | null,
  account: string,
): StreamStoreProvider {
  if (storage === 'file' && files !== null) return files.account(account);
  return new MemoryStoreProvider();
}
