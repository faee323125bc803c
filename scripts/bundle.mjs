// `npm run build`, after tsc: bundles the compiled code into dist/bundle/.
//
// Why: a spawned server used to spend most of its start-up resolving, reading,
// compiling and linking about 80 ES modules one by one (bench/startup.ts measures it).
// - cli.cjs: the command, one CommonJS module body that bin/wirebus loads with V8's code
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
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'bundle');

/**
 * In the CommonJS bundle, the file URL of a path relative to the bundle: defined once
 * at its top, where `require` cannot be shadowed by a local of the same name.
 */
const CJS_URL_OF = '__wirebusUrlOf';
/**
 * The command's bundle is the body of the function that CommonJS wraps a module in,
 * written out already wrapped: bin/load-bundle.cjs compiles the file's text as it is,
 * and V8 keeps that one string as the script's source for the server's lifetime
 * (wrapping it at load time made a second 1.2 MB copy that an idle server never
 * collected).
 */
const CJS_WRAPPER = '(function (exports, require, module, __filename, __dirname) {';
const CJS_BANNER =
  CJS_WRAPPER +
  // First in the body, so that the bundle stays strict code (the ES modules it came from were).
  ' "use strict";\n' +
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

/**
 * Replaces the non-ASCII characters left in the output (esbuild escapes those of
 * strings, templates and regular expressions, so only comments keep any) by their
 * `\uXXXX` spelling. V8 stores a source with even one such character as two bytes a
 * character, and keeps every loaded module's source: the command's bundle alone went
 * from 2.4 MB to 1.2 MB of an idle server's memory.
 */
async function asciiOnly(dir) {
  for (const name of await readdir(dir)) {
    if (!/\.c?js$/.test(name)) continue;
    const path = join(dir, name);
    const text = await readFile(path, 'utf8');
    const ascii = text.replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    if (ascii !== text) await writeFile(path, ascii);
  }
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
  footer: { js: '\n});' },
  plugins: [ownImportMeta('cjs')],
});

await asciiOnly(outdir);

// The code cache only speeds start-up: without it the command still runs.
const warm = spawnSync(process.execPath, [join(root, 'scripts', 'warm-code-cache.mjs')], {
  stdio: ['ignore', 'inherit', 'inherit'],
  timeout: 60_000,
});
if (warm.status !== 0) {
  console.warn('bundle: no code cache was written; bin/wirebus will compile the bundle');
}
