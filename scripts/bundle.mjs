// `npm run build`, after tsc: bundles the compiled code into dist/bundle/.
//
// Why: a spawned server used to spend most of its start-up resolving, reading,
// compiling and linking about 80 ES modules one by one (bench/startup.ts measures it).
// - cli.cjs: the command, one CommonJS file that bin/wirebus loads with V8's code
//   cache (bin/load-bundle.cjs); the cache is written by running the command once
//   (scripts/warm-code-cache.mjs). Node 20 can use a code cache only for scripts, not
//   for ES modules, hence CommonJS. Lazily loaded layers (streaming, its stores, the
//   nats client) are in the file but run only when asked for.
// - index.js and its chunks: the embedding API (`import('wirebus')`), ES modules
//   split so that each lazily loaded layer is its own chunk.
// npm packages stay outside (they load from node_modules as before; the native
// bcrypt addon must), and so do node: built-ins.
//
// Source files that find their neighbours through `import.meta.url` (or `.dirname`,
// `.filename`) keep doing so: each mention is rewritten to the file's own under
// dist/src, which ships beside the bundle.

import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'bundle');

/**
 * In the CommonJS bundle, the file URL of a path relative to the bundle: defined once
 * at its top, where `require` cannot be shadowed by a local of the same name.
 */
const CJS_URL_OF = '__wirebusUrlOf';
const CJS_BANNER =
  // First, so that the bundle stays strict code (the ES modules it came from were).
  '"use strict";\n' +
  `const ${CJS_URL_OF} = (rel) => ` +
  'require("node:url").pathToFileURL(require("node:path").join(__dirname, rel)).href;';

/**
 * Rewrites `import.meta.url`, `.filename` and `.dirname` in each input to those of
 * that input under dist/src.
 */
function ownImportMeta(format) {
  return {
    name: 'own-import-meta',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        if (!/import\.meta\.(url|filename|dirname)/.test(source)) return undefined;
        const rel = relative(outdir, resolve(args.path)).split('\\').join('/');
        const base = format === 'esm' ? 'import.meta.dirname' : '__dirname';
        const own = {
          url:
            format === 'esm'
              ? `new URL(${JSON.stringify(rel)}, import.meta.url).href`
              : `${CJS_URL_OF}(${JSON.stringify(rel)})`,
          filename: `(${base} + ${JSON.stringify('/' + rel)})`,
          dirname: `(${base} + ${JSON.stringify('/' + dirname(rel))})`,
        };
        const contents = source.replace(
          /import\.meta\.(url|filename|dirname)/g,
          (_, key) => own[key],
        );
        return { contents, loader: 'js' };
      });
    },
  };
}

const common = {
  absWorkingDir: root,
  outdir,
  bundle: true,
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
};

await rm(outdir, { recursive: true, force: true });
await build({
  ...common,
  entryPoints: { index: 'dist/src/index.js' },
  splitting: true,
  format: 'esm',
  plugins: [ownImportMeta('esm')],
});
await build({
  ...common,
  entryPoints: { cli: 'dist/src/cli.js' },
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  banner: { js: CJS_BANNER },
  plugins: [ownImportMeta('cjs')],
});

// The code cache only speeds start-up: without it the command still runs.
const warm = spawnSync(process.execPath, [join(root, 'scripts', 'warm-code-cache.mjs')], {
  stdio: ['ignore', 'inherit', 'inherit'],
  timeout: 60_000,
});
if (warm.status !== 0) {
  console.warn('bundle: no code cache was written; bin/wirebus will compile the bundle');
}
