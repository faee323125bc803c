// Malformed config text: whatever the input, parsing ends with a tree or a
// ConfigError, never another exception, a crash or a hang. (During development the
// same generators were run against the nats-server 2.9.10 binary: same accepted
// inputs, same error texts.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';

import { ConfigError, parseConfigText, toPlain } from '../../src/config/conf.js';

/** Pieces of the language, so that random text reaches deep states of the lexer. */
const piece = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  '(',
  ')',
  '\n)\n',
  ':',
  '=',
  ',',
  ';',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '#',
  '//',
  '/',
  '"',
  "'",
  '\\',
  '\\x4',
  '\\x41',
  '\\t',
  '\\q',
  '$',
  '$a',
  '$HOME',
  '$2a$x',
  '-',
  '.',
  '0',
  '12',
  '1.5',
  '1.2.3',
  '2016-05-04T18:53:41Z',
  '2016-',
  'k',
  'MB',
  'KiB',
  'e',
  'include ',
  'INCLUDE',
  'a',
  'key',
  'true',
  'off',
  'x y',
  '\u0000',
  '\u00e9',
  '\u0661',
  '\u2028',
  '\ud83d\ude00',
  '\ufeff',
);

const langText = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));
const anyText = fc.string({ unit: 'binary', maxLength: 60 });

function outcome(text: string, file: string): 'parsed' | 'error' {
  try {
    const m = parseConfigText(text, file, { a: 'x', HOME: '{ h: [1, $a] }' });
    toPlain(m);
    return 'parsed';
  } catch (err) {
    if (err instanceof ConfigError) {
      assert.equal(typeof err.line, 'number');
      assert.ok(err.message.startsWith(err.file));
      return 'error';
    }
    throw err;
  }
}

test('random text parses or throws ConfigError, nothing else', () => {
  // Includes in random text resolve inside an empty directory.
  const dir = mkdtempSync(join(tmpdir(), 'wirebus-fuzz-'));
  try {
    const file = join(dir, 'fuzz.conf');
    fc.assert(
      fc.property(fc.oneof(langText, anyText), (text) => {
        outcome(text, file);
      }),
      { numRuns: 3000 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('deep nesting and long inputs are handled without recursion', () => {
  const depth = 20_000;
  assert.equal(outcome('a = ' + '['.repeat(depth), 'deep.conf'), 'error');
  assert.equal(outcome('a ' + '{ b '.repeat(depth), 'deep.conf'), 'error');
  const balanced = 'a = ' + '[ '.repeat(depth) + ']\n'.repeat(depth);
  assert.equal(outcome(balanced, 'deep.conf'), 'parsed');
  assert.equal(outcome('x = "' + 'y'.repeat(1_000_000), 'long.conf'), 'error');
});
