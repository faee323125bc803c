// The code cache the build writes (dist/bundle/cli.cjs.cache, scripts/warm-code-cache.mjs)
// must fit a server as it starts: V8 silently rejects a cache made under other V8
// flags, and then every spawned server compiles the whole bundle again. The command
// changes a V8 flag once it is ready (cli.READY_V8_FLAGS), which the build has to
// undo before it saves the cache of the server it ran.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { ROOT } from './helpers.js';

const bundle = join(ROOT, 'dist', 'bundle', 'cli.cjs');
const cache = `${bundle}.cache`;
const built = existsSync(bundle) && existsSync(cache);

test(
  'the build code cache is accepted under the flags a server starts with',
  { skip: built ? false : 'no bundle and code cache in dist/bundle: run `npm run build`' },
  () => {
    const script = new Script(readFileSync(bundle, 'latin1'), {
      filename: bundle,
      cachedData: readFileSync(cache),
    });
    assert.equal(script.cachedDataRejected, false);
  },
);
