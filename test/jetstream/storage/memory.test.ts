// The JetStream memory store: the shared conformance suite (nothing survives a restart).
import { storageConformance } from './conformance.js';
import { MemoryStoreProvider } from '../../../src/jetstream/storage/memory.js';

storageConformance('memory', {
  storage: 'memory',
  survivesRestart: false,
  fresh: () =>
    Promise.resolve(() =>
      Promise.resolve({ provider: new MemoryStoreProvider(), close: () => Promise.resolve() }),
    ),
});
