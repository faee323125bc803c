// Store limits: defaults, the meaning of 0 and negative values, wildcard inheritance
// and the validation texts, as the reference's StoreLimits.Build has them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_STORE_LIMITS,
  ResolvedLimits,
  goDuration,
  isStoreError,
  storezLimits,
  type StoreLimitsConfig,
} from '../../src/streaming/store/index.js';

function buildError(config: StoreLimitsConfig): string {
  try {
    ResolvedLimits.build(config);
  } catch (err) {
    assert.ok(isStoreError(err, 'INVALID_LIMITS'));
    return err.message;
  }
  assert.fail('expected the limits to be refused');
}

describe('store limits', () => {
  it('defaults to the reference values (max_bytes is 1000000 × 1024, not 1 GiB)', () => {
    assert.deepEqual(ResolvedLimits.build().global, {
      maxChannels: 100,
      maxMsgs: 1_000_000,
      maxBytes: 1_024_000_000,
      maxAge: 0,
      maxSubscriptions: 1000,
      maxInactivity: 0,
    });
    assert.deepEqual(ResolvedLimits.build({ maxMsgs: 0 }).global, {
      ...DEFAULT_STORE_LIMITS,
      maxMsgs: 0,
    });
  });

  it('refuses negative global limits, in the reference order and words', () => {
    assert.equal(buildError({ maxChannels: -1 }), 'max channels limit cannot be negative (-1)');
    assert.equal(
      buildError({ maxSubscriptions: -2, maxMsgs: -1 }),
      'max subscriptions limit cannot be negative (-2)',
    );
    assert.equal(buildError({ maxMsgs: -1 }), 'max messages limit cannot be negative (-1)');
    assert.equal(buildError({ maxBytes: -1 }), 'max bytes limit cannot be negative (-1)');
    assert.equal(buildError({ maxAge: -1000 }), 'max age limit cannot be negative (-1s)');
    assert.equal(
      buildError({ maxInactivity: -90_000 }),
      'max inactivity limit cannot be negative (-1m30s)',
    );
    assert.equal(buildError({ maxMsgs: 1.5 }), 'max messages limit must be an integer (1.5)');
  });

  it('per channel: absent or 0 inherits, negative means unlimited (shown as 0)', () => {
    const limits = ResolvedLimits.build({
      maxMsgs: 500,
      maxAge: 60_000,
      perChannel: { foo: { maxMsgs: 0, maxBytes: -1, maxAge: 1000 } },
    });
    assert.deepEqual(limits.forChannel('foo'), {
      maxMsgs: 500,
      maxBytes: 0,
      maxAge: 1000,
      maxSubscriptions: 1000,
      maxInactivity: 0,
    });
    assert.equal(limits.forChannel('bar').maxAge, 60_000);
  });

  it('inherits global -> foo.> -> foo.* -> foo.bar, and a channel takes its narrowest match', () => {
    const limits = ResolvedLimits.build({
      maxMsgs: 1000,
      perChannel: {
        'foo.bar': { maxAge: 5000 },
        'foo.*': { maxBytes: 10_000 },
        'foo.>': { maxMsgs: 500, maxSubscriptions: 7 },
        '>': { maxInactivity: 3_600_000 },
      },
    });
    const expected = (o: object) => ({ ...limits.forChannel('zzz'), ...o });
    assert.deepEqual(limits.forChannel('zzz'), {
      maxMsgs: 1000,
      maxBytes: DEFAULT_STORE_LIMITS.maxBytes,
      maxAge: 0,
      maxSubscriptions: 1000,
      maxInactivity: 3_600_000,
    });
    assert.deepEqual(limits.forChannel('foo.a.b'), expected({ maxMsgs: 500, maxSubscriptions: 7 }));
    assert.deepEqual(
      limits.forChannel('foo.baz'),
      expected({ maxMsgs: 500, maxSubscriptions: 7, maxBytes: 10_000 }),
    );
    assert.deepEqual(
      limits.forChannel('foo.bar'),
      expected({ maxMsgs: 500, maxSubscriptions: 7, maxBytes: 10_000, maxAge: 5000 }),
    );
  });

  it('shows limits as /streaming/storez does: nanoseconds, inherited values, sorted names', () => {
    const limits = ResolvedLimits.build({
      maxAge: 3_600_000,
      perChannel: { 'foo.*': { maxMsgs: 300 }, bar: { maxInactivity: 1000 } },
    });
    assert.deepEqual(storezLimits(limits), {
      max_channels: 100,
      max_msgs: 1_000_000,
      max_bytes: 1_024_000_000,
      max_age: 3_600_000_000_000,
      max_subscriptions: 1000,
      max_inactivity: 0,
      channels: {
        bar: {
          max_msgs: 1_000_000,
          max_bytes: 1_024_000_000,
          max_age: 3_600_000_000_000,
          max_subscriptions: 1000,
          max_inactivity: 1_000_000_000,
        },
        'foo.*': {
          max_msgs: 300,
          max_bytes: 1_024_000_000,
          max_age: 3_600_000_000_000,
          max_subscriptions: 1000,
          max_inactivity: 0,
        },
      },
    });
    assert.equal(
      Object.keys(storezLimits(limits)).join(),
      'max_channels,max_msgs,max_bytes,max_age,max_subscriptions,max_inactivity,channels',
    );
    assert.equal('channels' in storezLimits(ResolvedLimits.build()), false);
  });

  it('refuses invalid per-channel names', () => {
    for (const name of ['', 'foo..bar', '.foo', 'foo.', 'foo.>.bar', 'foo*', 'a/b', 'fo>']) {
      assert.equal(buildError({ perChannel: { [name]: {} } }), `invalid channel name "${name}"`);
    }
  });

  it('refuses more literal per-channel entries than max_channels (wildcards do not count)', () => {
    const perChannel = { a: {}, b: {}, c: {}, 'd.*': {}, 'e.>': {} };
    assert.equal(
      buildError({ maxChannels: 2, perChannel }),
      'too many channels defined (3). The max channels limit is set to 2',
    );
    ResolvedLimits.build({ maxChannels: 3, perChannel });
    ResolvedLimits.build({ maxChannels: 0, perChannel });
  });

  it('prints durations as Go does', () => {
    assert.equal(goDuration(0), '0s');
    assert.equal(goDuration(250), '250ms');
    assert.equal(goDuration(1500), '1.5s');
    assert.equal(goDuration(3_600_000), '1h0m0s');
    assert.equal(goDuration(-86_400_000), '-24h0m0s');
  });
});
