// V8's own view of a value, for tests that guard the hot paths' hidden classes: a
// field that starts as a small integer and later gets a heap number retires its
// object's hidden class and deoptimizes the code compiled around it, which a fresh
// server pays in its first seconds (bench/RESULTS.md, "A fresh server's first
// messages"). The natives are V8's test intrinsics, enabled in this test process only.
import { runInThisContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--allow-natives-syntax');

/** True when V8 holds `value` as a small integer (no heap number). */
export const isSmallInteger = runInThisContext('(value) => %IsSmi(value)') as (
  value: unknown,
) => boolean;

/** True when two objects share one hidden class. */
export const haveSameMap = runInThisContext('(a, b) => %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;
