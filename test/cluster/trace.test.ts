// The route CONNECT in a trace log (-V) never shows the route's credentials.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { closeAll, routeUrl, startNode, waitMesh } from './helpers.js';

describe('route trace', () => {
  it('the CONNECT of a route is traced with its password blanked', async () => {
    const logFile = join(mkdtempSync(join(tmpdir(), 'wb-route-trace-')), 'a.log');
    const a = await startNode(
      { user: 'ruser', password: 'route-s3cret' },
      { trace: true, logFile },
    );
    const url = routeUrl(a).replace('nats-route://', 'nats-route://ruser:route-s3cret@');
    const b = await startNode({ routes: [url] });
    try {
      await waitMesh([a, b]);
      const log = readFileSync(logFile, 'utf8');
      const connect = log.split('\n').find((l) => l.includes('<<- [CONNECT'));
      assert.ok(connect !== undefined, 'the route CONNECT is traced');
      assert.match(connect, /"pass":"\[REDACTED\]"/);
      assert.match(connect, /"user":"ruser"/);
      assert.equal(log.includes('route-s3cret'), false);
    } finally {
      await closeAll([a, b]);
    }
  });
});
