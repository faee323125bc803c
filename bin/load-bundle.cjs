// Loads the bundled command (dist/bundle/cli.cjs, made by `npm run build`) with V8's
// code cache: the build ran the command once up to "Server is ready" and saved the
// compiled code of everything that start-up ran (cli.cjs.cache), so a spawned server
// neither parses the bundle nor compiles those functions again. A cache that does
// not fit this Node (another version, other V8 flags) is rejected by V8 and the
// bundle is compiled as usual.
'use strict';

const { readFileSync, statSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

const dist = join(__dirname, '..', 'dist');
const bundle = join(dist, 'bundle', 'cli.cjs');
const cache = `${bundle}.cache`;

/**
 * True when the bundle exists and is no older than the last `tsc` run
 * (dist/.tsbuildinfo, absent from the npm package): after a bare `tsc` it would run
 * stale code, and the caller runs the modules of dist/src instead.
 */
function bundleIsCurrent() {
  const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;
  const built = mtime(bundle);
  const compiled = mtime(join(dist, '.tsbuildinfo'));
  return built !== undefined && (compiled === undefined || built >= compiled);
}

/** Runs the bundle as a CommonJS module; returns its exports and a way to save the cache. */
function loadBundle() {
  let cachedData;
  try {
    cachedData = readFileSync(cache);
  } catch {
    cachedData = undefined;
  }
  // The file is already the module wrapper's text, and ASCII only (scripts/bundle.mjs):
  // read as latin1, Node hands V8 the 1.2 MB source as a one-byte string that V8 keeps
  // as it is, with no copy.
  const script = new Script(readFileSync(bundle, 'latin1'), {
    filename: bundle,
    cachedData,
  });
  const mod = new Module(bundle, module);
  mod.filename = bundle;
  mod.paths = Module._nodeModulePaths(dirname(bundle));
  script
    .runInThisContext()
    .call(mod.exports, mod.exports, Module.createRequire(bundle), mod, bundle, dirname(bundle));
  mod.loaded = true;
  return {
    exports: mod.exports,
    /** Writes the code compiled so far as the cache for the next start. */
    saveCache: () => writeFileSync(cache, script.createCachedData()),
  };
}

module.exports = { bundleIsCurrent, loadBundle };
