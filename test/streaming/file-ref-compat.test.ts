// The reference's FILE store layout, both ways:
// - fixtures/stan-ref-file/data, written by nats-streaming-server 0.25.3 (see
//   file-ref-capture.ts), is served by wirebus exactly as the reference serves it
//   (expected.json: what the reference showed, restarted on a copy);
// - replaying the fixture's records through wirebus's store writes the same bytes,
//   file by file (no reference needed);
// - a directory written by wirebus running the same scenario is served by the
//   reference as it serves its own (needs the binary; skipped without it).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import {
  ClientDelete,
  ClientInfo,
  MsgProto,
  SubStateDelete,
  SubStateUpdate,
  seqFromLong,
} from '../../src/streaming/protocol/index.js';
import { FileStore } from '../../src/streaming/store/file.js';
import { readServerInfo, writeServerInfo } from '../../src/streaming/store/file-root.js';
import { DEFAULT_FILE_STORE_TUNING } from '../../src/streaming/store/file-options.js';
import { IEEE } from '../../src/streaming/store/file-record.js';
import { makeStoredMsg } from '../../src/streaming/store/message.js';
import { decodeSub } from '../../src/streaming/store/records.js';
import { cleanupDirs, tempDir } from './file-fixtures.js';
import {
  FIXTURE_DIR,
  expectedObservation,
  observe,
  serveScenario,
  writeScenario,
  type Observation,
} from './file-ref-scenario.js';
import { skipWithoutReference } from './stan-reference.js';

after(cleanupDirs);

const DATA = join(FIXTURE_DIR, 'data');

/** The records of a store file, read with the documented framing (CRC: zlib's IEEE). */
function records(file: Buffer, typed: boolean): { type: number; payload: Buffer }[] {
  assert.equal(file.readUInt32LE(0), 1, 'file version');
  const out: { type: number; payload: Buffer }[] = [];
  for (let pos = 4; pos < file.length;) {
    const field = file.readUInt32LE(pos);
    const size = typed ? field & 0xffffff : field;
    const payload = file.subarray(pos + 8, pos + 8 + size);
    assert.equal(crc32(payload), file.readUInt32LE(pos + 4), `CRC at ${pos}`);
    out.push({ type: typed ? field >>> 24 : 0, payload });
    pos += 8 + size;
  }
  return out;
}

/** Timestamps differ between two runs of the scenario: everything else must not. */
function withoutTimes(o: Observation): Observation {
  const messages: Observation['messages'] = {};
  for (const [ch, list] of Object.entries(o.messages)) {
    messages[ch] = list.map(([seq, data]) => [seq, data, 0]);
  }
  return { ...o, messages };
}

describe('the reference FILE layout', () => {
  it('a directory written by nats-streaming-server 0.25.3 is served as the reference serves it', async () => {
    const work = await tempDir();
    const dir = join(work, 'data');
    await cp(DATA, dir, { recursive: true });
    const server = await serveScenario('wirebus', dir, work);
    let seen: Observation;
    try {
      seen = await observe(server.url, server.http);
    } finally {
      await server.stop();
    }
    assert.deepEqual(seen, await expectedObservation());
  });

  it("replaying the fixture's records through wirebus's store writes the same bytes", async () => {
    const work = await tempDir();
    // server.dat
    const info = await readServerInfo(DATA, DEFAULT_FILE_STORE_TUNING);
    assert.ok(info !== undefined);
    await writeServerInfo(work, info, IEEE);
    assert.deepEqual(
      await readFile(join(work, 'server.dat')),
      await readFile(join(DATA, 'server.dat')),
    );

    const dir = join(work, 'store');
    const store = new FileStore({ dir, sliceMaxMsgs: 4 });
    await store.recover();
    for (const r of records(await readFile(join(DATA, 'clients.dat')), true)) {
      if (r.type === 1) {
        const c = ClientInfo.decode(r.payload);
        store.addClient({
          id: c.ID,
          hbInbox: c.HbInbox,
          connID: c.ConnID,
          protocol: c.Protocol,
          pingInterval: c.PingInterval,
          pingMaxOut: c.PingMaxOut,
        });
      } else {
        assert.equal(r.type, 2);
        store.deleteClient(ClientDelete.decode(r.payload).ID);
      }
    }
    for (const channel of ['foo', 'lim']) {
      const ch = store.createChannel(channel);
      const dats = (await readdir(join(DATA, channel))).filter(
        (n) => n.endsWith('.dat') && n !== 'subs.dat',
      );
      for (const name of dats.sort()) {
        for (const r of records(await readFile(join(DATA, channel, name)), false)) {
          const m = MsgProto.decode(r.payload);
          const seq = seqFromLong(m.sequence);
          ch.msgs.store(makeStoredMsg(seq, m.timestamp, m.subject, m.reply, m.data));
        }
      }
      const subs = ch.subs;
      for (const r of records(await readFile(join(DATA, channel, 'subs.dat')), true)) {
        if (r.type === 1 || r.type === 2) {
          const record = decodeSub(r.payload);
          if (r.type === 1) assert.equal(subs.create(record).id, record.id);
          else subs.update(record);
        } else if (r.type === 3) {
          subs.delete(seqFromLong(SubStateDelete.decode(r.payload).ID));
        } else {
          const u = SubStateUpdate.decode(r.payload);
          if (r.type === 4) subs.ack(seqFromLong(u.ID), seqFromLong(u.seqno));
          else subs.addPending(seqFromLong(u.ID), seqFromLong(u.seqno));
        }
      }
    }
    await store.close();
    const same = async (ours: string, theirs: string): Promise<void> => {
      assert.deepEqual(await readFile(join(dir, ours)), await readFile(join(DATA, theirs)), theirs);
    };
    await same('clients.dat', 'clients.dat');
    for (const channel of ['foo', 'lim'])
      await same(join(channel, 'subs.dat'), join(channel, 'subs.dat'));
    // foo kept all its slices; lim's first two were removed by its limits (the
    // replay starts at its first kept message, so our slice 1 is its slice 3).
    for (const [ours, theirs] of [
      ['foo/msgs.1', 'foo/msgs.1'],
      ['foo/msgs.2', 'foo/msgs.2'],
      ['foo/msgs.3', 'foo/msgs.3'],
      ['lim/msgs.1', 'lim/msgs.3'],
      ['lim/msgs.2', 'lim/msgs.4'],
    ]) {
      await same(`${ours!}.dat`, `${theirs!}.dat`);
      await same(`${ours!}.idx`, `${theirs!}.idx`);
    }
  });

  it(
    'a directory written by wirebus is served by the reference as it serves its own',
    { skip: skipWithoutReference() },
    async () => {
      const work = await tempDir();
      const dir = join(work, 'data');
      const server = await serveScenario('wirebus', dir, work);
      try {
        await writeScenario(server.url, server.http);
      } finally {
        await server.stop();
      }
      const ref = await serveScenario('reference', dir, work);
      let seen: Observation;
      try {
        seen = await observe(ref.url, ref.http);
      } finally {
        await ref.stop();
      }
      assert.deepEqual(withoutTimes(seen), withoutTimes(await expectedObservation()));
    },
  );
});
