// The route CONNECT in a trace log (-V) never shows the route's credentials; a routed
// message is traced with the route's label, as the reference's
// `127.0.0.1:6222 - rid:4 - ->> [RMSG $G foo 2]`.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect } from 'nats';
import { closeAll, routeUrl, startNode, waitFor, waitMesh, waitRouteInterest } from './helpers.js';

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

  it('a message sent on a route is traced with the route id (rid), as its other lines', async () => {
    const logFile = join(mkdtempSync(join(tmpdir(), 'wb-route-trace-')), 'a.log');
    const a = await startNode({}, { trace: true, logFile });
    const b = await startNode({ routes: [routeUrl(a)] });
    const nb = await connect({ servers: b.url });
    const na = await connect({ servers: a.url });
    try {
      await waitMesh([a, b]);
      nb.subscribe('tr.x');
      await nb.flush();
      await waitRouteInterest([a], 'tr.x');
      na.publish('tr.x', 'hi');
      await na.flush();
      let line: string | undefined;
      await waitFor('the RMSG in the trace', () => {
        line = readFileSync(logFile, 'utf8')
          .split('\n')
          .find((l) => l.includes('->> [RMSG $G tr.x 2]'));
        return line !== undefined;
      });
      assert.match(line!, / - rid:\d+ - ->> \[RMSG \$G tr\.x 2\]$/);
    } finally {
      await na.close();
      await nb.close();
      await closeAll([a, b]);
    }
  });
});
