// Durations: Go's time.ParseDuration syntax, and the reference server's rule that
// an integer is a number of seconds (with a warning).

import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  ConfigError,
  DurationError,
  parseConfigText,
  parseDuration,
  parseGoDuration,
  type ConfValue,
} from '../../src/config/conf.js';

test('Go duration strings, in milliseconds', () => {
  const cases: [string, number][] = [
    ['2m', 120_000],
    ['10s', 10_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5s', 1500],
    ['.5s', 500],
    ['1.s', 1000],
    ['1h2m3s4ms', 3_723_004],
    ['-1m', -60_000],
    ['+5s', 5000],
    ['0', 0],
    ['-0', 0],
    ['0s', 0],
    ['1us', 0.001],
    ['1\u00b5s', 0.001],
    ['1\u03bcs', 0.001],
    ['1000ns', 0.001],
    ['2562047h', 2562047 * 3_600_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseGoDuration(text), ms, text);
});

test('Go duration errors, in Go words', () => {
  const cases: [string, string][] = [
    ['', 'time: invalid duration ""'],
    ['10', 'time: missing unit in duration "10"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['1 s', 'time: unknown unit " s" in duration "1 s"'],
    ['.', 'time: invalid duration "."'],
    ['s', 'time: invalid duration "s"'],
    ['-', 'time: invalid duration "-"'],
    ['1h-1m', 'time: unknown unit "h-" in duration "1h-1m"'],
    ['9999999999h', 'time: invalid duration "9999999999h"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => parseGoDuration(text),
      (err: unknown) => err instanceof DurationError && err.message === message,
      text,
    );
  }
  // The most negative duration fits, as in Go.
  assert.equal(parseGoDuration('-9223372036854775808ns'), Number(-(2n ** 63n)) / 1e6);
});

function value(text: string, key: string): ConfValue {
  const entry = parseConfigText(text, 'd.conf', {}).value.get(key);
  assert.ok(entry);
  return entry.value;
}

test('parseDuration: strings are Go durations, integers are seconds with a warning', () => {
  assert.equal(
    parseDuration(value('ping_interval: "2m"', 'ping_interval'), 'ping_interval'),
    120_000,
  );
  // Durations are plain strings to the parser, quoted or not.
  assert.equal(
    parseDuration(value('write_deadline: 10s', 'write_deadline'), 'write_deadline'),
    10_000,
  );
  const warnings: ConfigError[] = [];
  const ms = parseDuration(value('\nping_interval: 30', 'ping_interval'), 'ping_interval', (w) =>
    warnings.push(w),
  );
  assert.equal(ms, 30_000);
  assert.equal(warnings.length, 1);
  assert.equal(
    warnings[0]!.message,
    'd.conf:2:16: ping_interval should be converted to a duration',
  );
  // Without a listener the warning is dropped.
  assert.equal(parseDuration(value('a: 1', 'a'), 'a'), 1000);
});

test('parseDuration: errors carry the position of the value', () => {
  const check = (text: string, message: string): void => {
    assert.throws(
      () => parseDuration(value(text, 'write_deadline'), 'write_deadline'),
      (err: unknown) => err instanceof ConfigError && err.message === message,
      text,
    );
  };
  check(
    'a: 1\nwrite_deadline: "10"',
    'd.conf:2:17: error parsing write_deadline: time: missing unit in duration "10"',
  );
  check(
    'write_deadline: "1d"',
    'd.conf:1:17: error parsing write_deadline: time: unknown unit "d" in duration "1d"',
  );
  check(
    'write_deadline: 1.5',
    'd.conf:1:17: error parsing write_deadline: expected a duration string such as "2m" or an integer number of seconds, got a float',
  );
  check(
    'write_deadline: [1s]',
    'd.conf:1:17: error parsing write_deadline: expected a duration string such as "2m" or an integer number of seconds, got a array',
  );
});
