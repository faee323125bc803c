// Modules a feature needs only when it is used (bcrypt, nkeys, node:tls): most
// servers never use them, and loading them costs milliseconds of every start-up.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** `load()`, run on the first call and kept: `onFirstUse(() => requireModule(id) as M)`. */
export function onFirstUse<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}

/** A package or built-in module by its id, loaded now (CommonJS `require`). */
export function requireModule(id: string): unknown {
  return require(id);
}
