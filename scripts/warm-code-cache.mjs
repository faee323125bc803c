// Part of `npm run build`: runs the bundled command once, up to "Server is ready" on
// loopback ports chosen by the system, and saves V8's code cache of everything
// start-up compiled (dist/bundle/cli.cjs.cache; see bin/load-bundle.cjs).

import { createRequire } from 'node:module';

const { loadBundle } = createRequire(import.meta.url)('../bin/load-bundle.cjs');

const { exports: cli, saveCache } = loadBundle();
const write = process.stderr.write.bind(process.stderr);
let log = '';
process.stderr.write = (chunk) => {
  log += String(chunk);
  if (log.includes('Server is ready')) {
    saveCache();
    process.exit(0);
  }
  return true;
};
cli.main(['-a', '127.0.0.1', '-p', '-1', '-m', '-1']).then(
  (code) => {
    write(`warm-code-cache: the server stopped (${code}) before it was ready:\n${log}`);
    process.exit(1);
  },
  (err) => {
    write(`warm-code-cache: ${err instanceof Error ? err.stack : String(err)}\n${log}`);
    process.exit(1);
  },
);
