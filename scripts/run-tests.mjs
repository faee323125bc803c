// Runs every compiled *.test.js under dist/test with node's test runner. Node 20
// takes no globs, and given a folder it would also run every helper module under
// a `test` directory, so the files are listed explicitly.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...find(path));
    else if (entry.name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const roots = process.argv.slice(2);
const files = (roots.length > 0 ? roots : ['dist/test'])
  .flatMap((r) => (r.endsWith('.js') ? [r] : find(r)))
  .sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
