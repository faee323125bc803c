// Subject rules (spec §4.1, §4.2) and the token matcher the results cache is patched with.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  hasWildcard,
  isValidLiteralSubject,
  isValidSubject,
  isValidSubscribeSubject,
  subjectMatches,
} from '../../src/subjects/validate.js';
import { bruteMatches } from './brute.js';

/** Subjects are latin1 strings of their bytes inside the server. */
const raw = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

describe('isValidSubscribeSubject (what the trie accepts, §4.1)', () => {
  test('refuses empty tokens and anything after a > token', () => {
    for (const s of [
      '',
      '.',
      'foo..bar',
      '.foo',
      'foo.',
      '..',
      'foo.>.bar',
      '>.foo',
      '>.>',
      '*.>.*',
    ]) {
      assert.equal(isValidSubscribeSubject(s), false, JSON.stringify(s));
    }
  });

  test('accepts everything else, wildcards-inside-tokens and odd bytes included', () => {
    for (const s of [
      'foo',
      'foo.bar',
      '*',
      '>',
      'foo.*',
      'foo.>',
      'foo.*.>',
      '*.*.*',
      'foo*',
      'foo.*bar',
      'foo>',
      'a.b>.c',
      '$SYS.>',
      '_INBOX.abc',
      raw('naïve.日本'),
      'nul\0byte',
      'with space',
      'tab\there',
    ]) {
      assert.equal(isValidSubscribeSubject(s), true, JSON.stringify(s));
    }
  });
});

describe('isValidLiteralSubject (the pedantic publish check, §4.2)', () => {
  test('refuses empty tokens and * or > tokens', () => {
    for (const s of [
      '',
      'foo..bar',
      '.foo',
      'foo.',
      '*',
      '>',
      'foo.*',
      'foo.>',
      '*.foo',
      'a.>.b',
    ]) {
      assert.equal(isValidLiteralSubject(s), false, JSON.stringify(s));
    }
  });

  test('accepts literal tokens, even ones holding * or >', () => {
    for (const s of ['foo', 'foo.bar', 'foo*', 'foo.*bar', 'a>.b', '$foo.bar', raw('ü.x')]) {
      assert.equal(isValidLiteralSubject(s), true, JSON.stringify(s));
    }
  });
});

describe('isValidSubject (the description strict rules)', () => {
  test('no whitespace anywhere', () => {
    for (const s of ['foo bar', 'foo\tbar', 'foo\r', 'foo\nbar']) {
      assert.equal(isValidSubject(s, true), false, JSON.stringify(s));
      assert.equal(isValidSubject(s, false), false, JSON.stringify(s));
    }
  });

  test('wildcards must be whole tokens, and only when allowed', () => {
    assert.equal(isValidSubject('foo.*', true), true);
    assert.equal(isValidSubject('foo.>', true), true);
    assert.equal(isValidSubject('foo.*.bar.>', true), true);
    assert.equal(isValidSubject('foo*.bar', true), false);
    assert.equal(isValidSubject('foo.>x', true), false);
    assert.equal(isValidSubject('foo.>.bar', true), false);
    assert.equal(isValidSubject('foo.*', false), false);
    assert.equal(isValidSubject('foo.bar', false), true);
    assert.equal(isValidSubject('foo..bar', true), false);
  });
});

describe('hasWildcard', () => {
  test('only whole * or > tokens count', () => {
    for (const s of ['*', '>', 'foo.*', 'foo.>', '*.foo', 'a.*.b'])
      assert.equal(hasWildcard(s), true, s);
    for (const s of ['foo', 'foo*', 'foo.*bar', 'a>.b', 'a.b>', '**', '>>']) {
      assert.equal(hasWildcard(s), false, s);
    }
  });
});

describe('subjectMatches', () => {
  test('the semantics of * and >', () => {
    const cases: [string, string, boolean][] = [
      ['foo', 'foo', true],
      ['foo', 'bar', false],
      ['foo', 'fo', false],
      ['foo.bar', '*', false],
      ['foo', '*', true],
      ['foo.bar', 'foo.*', true],
      ['foo.bar.baz', 'foo.*', false],
      ['foo', 'foo.>', false],
      ['foo.bar', 'foo.>', true],
      ['foo.a.b', 'foo.>', true],
      ['foo.bar', '>', true],
      ['$foo.bar', '>', true],
      ['foo.bar', '*.*', true],
      ['foo.bar', '*.>', true],
      ['foo', '*.>', false],
      ['foo.bar', 'foo.bar.>', false],
      ['foo..bar', '>', false],
      ['foo.', 'foo.>', false],
      ['.foo', '>', false],
      ['', '>', false],
      // A literal * or > published without pedantic is one more token.
      ['foo.*', 'foo.*', true],
      ['foo.*', 'foo.bar', false],
      ['>', '*', true],
      ['>', '>', true],
      ['foo*', 'foo*', true],
      ['foox', 'foo*', false],
    ];
    for (const [lit, pat, want] of cases) {
      assert.equal(subjectMatches(lit, pat), want, `${lit} ~ ${pat}`);
      assert.equal(bruteMatches(lit, pat), want, `brute ${lit} ~ ${pat}`);
    }
  });

  test('agrees with the brute-force matcher on random subjects', () => {
    const tok = fc.constantFrom('a', 'b', 'ab', '*', '>', '');
    const subj = fc.array(tok, { minLength: 1, maxLength: 4 }).map((t) => t.join('.'));
    const pattern = subj.filter(isValidSubscribeSubject);
    fc.assert(
      fc.property(subj, pattern, (lit, pat) => {
        assert.equal(subjectMatches(lit, pat), bruteMatches(lit, pat));
      }),
      { numRuns: 2000 },
    );
  });
});
