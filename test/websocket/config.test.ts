// The websocket block of a config file, through bin/wirebus as operators run it:
// the reference's keys start the listener, and a bad block exits 2 with a message.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { websocketFromConfig } from '../../src/websocket/config.js';
import { freePort, startWirebus } from '../helpers/process.js';
import { RawWs } from './raw-ws.js';

const dir = mkdtempSync(join(tmpdir(), 'wirebus-ws-conf-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function conf(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('websocket config block', () => {
  it('reads every key of the reference, aliases included', () => {
    const file = conf(
      'all.conf',
      `websocket {
        listen: "127.0.0.1:9999"
        advertise: "ws.example:443"
        no_tls: true
        same_origin: true
        allowed_origins: ["http://a.example", "https://b.example:8443"]
        compression: true
        handshake_timeout: "2s"
        authorization { user: web, password: pw, timeout: 3 }
        no_auth_user: guest
        jwt_cookie: jwt
      }`,
    );
    assert.deepEqual(websocketFromConfig(loadConfig(file)), {
      host: '127.0.0.1',
      port: 9999,
      advertise: 'ws.example:443',
      noTls: true,
      tls: null,
      sameOrigin: true,
      allowedOrigins: ['http://a.example', 'https://b.example:8443'],
      compression: true,
      handshakeTimeoutMs: 2000,
      user: 'web',
      password: 'pw',
      token: '',
      authTimeout: 3,
      noAuthUser: 'guest',
      jwtCookie: 'jwt',
    });
    const alias = conf(
      'alias.conf',
      'ws { port: 1234, host: "::1", origin: "http://c.example", compress: false }',
    );
    const o = websocketFromConfig(loadConfig(alias));
    assert.ok(o !== null);
    assert.equal(o.port, 1234);
    assert.equal(o.host, '::1');
    assert.deepEqual(o.allowedOrigins, ['http://c.example']);
  });

  it('starts bin/wirebus with the listener and lists it in the ports file', async () => {
    const wsPort = await freePort();
    const file = conf(
      'run.conf',
      `websocket { host: 127.0.0.1, port: ${wsPort}, no_tls: true }\nports_file_dir: "${dir}"`,
    );
    const p = await startWirebus(await freePort(), ['-c', file]);
    try {
      assert.match(
        p.log(),
        new RegExp(`Listening for websocket clients on ws://127.0.0.1:${wsPort}`),
      );
      assert.match(p.log(), /Websocket not configured with TLS\. DO NOT USE IN PRODUCTION!/);
      const ws = await RawWs.open(wsPort);
      assert.equal(ws.status, 101);
      ws.sendText('CONNECT {"verbose":false}\r\nPING\r\n');
      await ws.waitText('PONG\r\n');
      ws.close();
      const ports = JSON.parse(
        readFileSync(join(dir, `wirebus_${p.child.pid}.ports`), 'utf8'),
      ) as Record<string, string[]>;
      assert.deepEqual(ports.websocket, [`ws://127.0.0.1:${wsPort}`]);
    } finally {
      await p.stop();
    }
  });

  const bad: Array<[string, string, RegExp]> = [
    ['no TLS and no no_tls', 'websocket { port: 8080 }', /websocket requires TLS configuration/],
    [
      'an unknown key',
      'websocket {\n  port: 8080\n  no_tls: true\n  colour: blue\n}',
      /bad\.conf:4:\d+: unknown field "colour"/,
    ],
    ['a wrong type', 'websocket { port: "eighty", no_tls: true }', /port: expected an integer/],
    [
      'a missing no_auth_user',
      'websocket { port: 8080, no_tls: true, no_auth_user: ghost }',
      /no_auth_user: "ghost" not present/,
    ],
  ];
  for (const [name, text, message] of bad) {
    it(`exits 2 with a message for ${name}`, () => {
      const file = conf('bad.conf', text);
      const r = spawnSync(process.execPath, ['bin/wirebus', '-c', file, '-p', '0'], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }
});
