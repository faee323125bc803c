// A bug behind one op or one in-process subscriber must not take the server down.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withServer } from '../helpers/server.js';
import { C0, RawClient } from '../helpers/raw.js';

describe('failures inside the server stay local', () => {
  it('an in-process subscriber that throws does not stop delivery to the others', async () => {
    await withServer({}, async (s) => {
      const internal = s.server.createInternalClient('faulty');
      s.server.subscribeInternal(internal, 'foo', null, () => {
        throw new Error('boom');
      });
      const sub = await RawClient.open(s.port);
      const pub = await RawClient.open(s.port);
      try {
        assert.equal(await sub.exchange(`${C0}SUB foo 1\r\nPING\r\n`), 'PONG\r\n');
        assert.equal(await pub.exchange(`${C0}PUB foo 2\r\nhi\r\nPING\r\n`), 'PONG\r\n');
        assert.equal(await sub.exchange('PING\r\n'), 'MSG foo 1 2\r\nhi\r\nPONG\r\n');
      } finally {
        sub.close();
        pub.close();
      }
    });
  });

  it('an exception while handling an op closes that connection only', async () => {
    await withServer({}, async (s) => {
      const server = s.server;
      const original = server.checkPublish.bind(server);
      server.checkPublish = (c, subject) => {
        if (subject === 'explode') throw new Error('boom');
        return original(c, subject);
      };
      const bad = await RawClient.open(s.port);
      const good = await RawClient.open(s.port);
      try {
        bad.send(`${C0}PUB explode 1\r\nx\r\nPING\r\n`);
        assert.equal(await bad.waitClosed(), true);
        assert.equal(await good.exchange(`${C0}PING\r\n`), 'PONG\r\n');
      } finally {
        bad.close();
        good.close();
      }
    });
  });
});
