// Channel names (util.IsChannelNameValid): literal for clients, wildcards for limits.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { isChannelNameLiteral, isChannelNameValid } from '../../src/streaming/channel-name.js';

it('accepts literal names and refuses malformed ones', () => {
  for (const name of ['foo', 'foo.bar', 'a-b_c.D9', 'Foo.BAR.baz', 'x']) {
    assert.equal(isChannelNameValid(name, false), true, name);
  }
  for (const name of ['', '.', '.foo', 'foo.', 'foo..bar', 'a/b', 'foo.*', 'foo.>', '*', '>']) {
    assert.equal(isChannelNameValid(name, false), false, name);
  }
});

it('accepts whole-token wildcards where limits allow them, `>` only last', () => {
  for (const name of ['*', '>', 'foo.*', 'foo.>', '*.bar', 'foo.*.baz', '*.*']) {
    assert.equal(isChannelNameValid(name, true), true, name);
    assert.equal(isChannelNameLiteral(name), false, name);
  }
  for (const name of ['foo*', 'f*o', 'foo.>.bar', '>.foo', 'foo.**', 'foo.*>']) {
    assert.equal(isChannelNameValid(name, true), false, name);
  }
  assert.equal(isChannelNameLiteral('foo.bar'), true);
});
