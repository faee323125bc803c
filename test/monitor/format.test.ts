// The value formats of the monitor: Go's RFC 3339 times, uptimes and durations.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goDuration, rfc3339, rttString, uptime } from '../../src/monitor/format.js';

describe('monitor value formats', () => {
  it('writes times as RFC 3339 with up to nine fraction digits, trailing zeros dropped', () => {
    const t = Date.UTC(2026, 10, 22, 0, 31, 51, 83);
    assert.equal(rfc3339(t), '2026-11-22T00:31:51.083Z');
    // Microseconds at most: a double holding ms since 1970 has no finer precision.
    assert.equal(rfc3339(t + 0.959902), '2026-11-22T00:31:51.08396Z');
    assert.equal(rfc3339(t + 0.123), '2026-11-22T00:31:51.083123Z');
    assert.equal(rfc3339(t + 0.5), '2026-11-22T00:31:51.0835Z');
    assert.equal(rfc3339(Date.UTC(2026, 10, 22, 0, 31, 51)), '2026-11-22T00:31:51Z');
    assert.equal(rfc3339(Date.UTC(2026, 10, 22, 0, 31, 51, 100)), '2026-11-22T00:31:51.1Z');
  });

  it('writes uptimes as the reference: whole seconds, then m, h, d, y', () => {
    assert.equal(uptime(0), '0s');
    assert.equal(uptime(999), '0s');
    assert.equal(uptime(5000), '5s');
    assert.equal(uptime(62_000), '1m2s');
    assert.equal(uptime(3_601_000), '1h0m1s');
    assert.equal(uptime(((26 * 60 + 3) * 60 + 4) * 1000), '1d2h3m4s');
    assert.equal(uptime(400 * 86_400_000), '1y35d0h0m0s');
  });

  it("writes durations as Go's time.Duration.String()", () => {
    assert.equal(goDuration(0), '0s');
    assert.equal(goDuration(999), '999ns');
    assert.equal(goDuration(450_000), '450µs');
    assert.equal(goDuration(1_459_268), '1.459268ms');
    assert.equal(goDuration(1_500_000_000), '1.5s');
    assert.equal(goDuration(120_000_000_000), '2m0s');
    assert.equal(goDuration(3_723_000_000_000), '1h2m3s');
    assert.equal(goDuration(-1_500_000), '-1.5ms');
  });

  it('writes round-trip times, "0s" before one was measured', () => {
    assert.equal(rttString(-1), '0s');
    assert.equal(rttString(0), '0s');
    assert.equal(rttString(0.4505), '450µs');
    assert.equal(rttString(2), '2ms');
  });
});
