// A plain client's INFO at accept (src/server/info-line.ts): the shared fields' JSON
// is kept between connections, and must still be exactly what the reference sends,
// and follow every change of what it is made of.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withServer } from '../helpers/server.js';
import { RawClient } from '../helpers/raw.js';

/**
 * nats-server 2.9.10 `-a 127.0.0.1 -p PORT` (`--cluster_name foo` for the second
 * fixture) greeted a client with these lines; ids, ports and `go` differ per process.
 */
const REFERENCE_INFO =
  'INFO {"server_id":"NDCQYXJ5G63QAECD6JF5OU72UFKL7TEAYRR4LNEF7LHCTJIU2AZEBLFP","server_name":"NDCQYXJ5G63QAECD6JF5OU72UFKL7TEAYRR4LNEF7LHCTJIU2AZEBLFP","version":"2.9.10","proto":1,"go":"go1.19.8","host":"127.0.0.1","port":34905,"headers":true,"max_payload":1048576,"client_id":4,"client_ip":"127.0.0.1"} \r\n';
const REFERENCE_CLUSTER_INFO =
  'INFO {"server_id":"NAFJ3VXDNZNTN4U7IT5QZIG3ULNA23E64OTXLTQQLJGXFJLEEMIAUX6G","server_name":"NAFJ3VXDNZNTN4U7IT5QZIG3ULNA23E64OTXLTQQLJGXFJLEEMIAUX6G","version":"2.9.10","proto":1,"go":"go1.19.8","host":"127.0.0.1","port":51501,"headers":true,"max_payload":1048576,"client_id":4,"client_ip":"127.0.0.1","cluster":"foo"} \r\n';

/** The reference's line with this server's id, name, go, port and client id in it. */
function expected(reference: string, fields: Record<string, unknown>): string {
  const info = JSON.parse(reference.slice(5, -3)) as Record<string, unknown>;
  for (const [k, v] of Object.entries(fields)) info[k] = v;
  return `INFO ${JSON.stringify(info)} \r\n`;
}

async function greeting(port: number): Promise<{ line: string; id: number }> {
  const c = await RawClient.open(port);
  c.close();
  return { line: c.info, id: c.infoJson().client_id as number };
}

describe("a plain client's INFO", () => {
  it('is the reference line, field for field, connection after connection', async () => {
    await withServer({}, async (s) => {
      for (let i = 0; i < 3; i++) {
        const { line, id } = await greeting(s.port);
        const own = { server_id: s.server.id, server_name: s.server.name, go: process.version };
        assert.equal(line, expected(REFERENCE_INFO, { ...own, port: s.port, client_id: id }));
      }
    });
  });

  it('ends with the cluster name when one is set', async () => {
    await withServer({}, async (s) => {
      s.server.clusterName = 'foo';
      const { line, id } = await greeting(s.port);
      const own = { server_id: s.server.id, server_name: s.server.name, go: process.version };
      assert.equal(line, expected(REFERENCE_CLUSTER_INFO, { ...own, port: s.port, client_id: id }));
    });
  });

  it('follows a reload of what its shared fields are made of', async () => {
    await withServer({}, async (s) => {
      const before = await greeting(s.port);
      assert.match(before.line, /"max_payload":1048576,/);
      s.server.applyReload({ maxPayload: 4096, clientAdvertise: 'example.com:4333' });
      const after = await greeting(s.port);
      assert.match(after.line, /"host":"example\.com","port":4333,"headers":true,/);
      assert.match(
        after.line,
        /"max_payload":4096,"client_id":\d+,"client_ip":"127\.0\.0\.1"\} \r\n$/,
      );
    });
  });
});
