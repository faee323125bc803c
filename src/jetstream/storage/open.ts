// Chooses the provider of a stream's storage: memory streams always use the memory
// store; file streams use the file store where one is available.

import { MemoryStoreProvider } from './memory.js';
import type { StorageType, StreamStoreProvider } from './types.js';

/** Opens the provider for one account's streams of one storage type. */
export type ProviderFactory = (storage: StorageType, accountDir: string) => StreamStoreProvider;

let fileProvider: ProviderFactory | null = null;

/** Registers the file store (src/jetstream/storage/file*): it replaces the fallback. */
export function registerFileProvider(factory: ProviderFactory): void {
  fileProvider = factory;
}

export function hasFileProvider(): boolean {
  return fileProvider !== null;
}

export function openProvider(storage: StorageType, accountDir: string): StreamStoreProvider {
  if (storage === 'file' && fileProvider !== null) return fileProvider(storage, accountDir);
  return new MemoryStoreProvider();
}
