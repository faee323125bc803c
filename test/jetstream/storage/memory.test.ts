// The JetStream memory store: the shared conformance suite (nothing survives a restart).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storageConformance, streamConfig } from './conformance.js';
import { MemoryStoreProvider } from '../../../src/jetstream/storage/memory.js';

storageConformance('memory', {
  storage: 'memory',
  survivesRestart: false,
  fresh: () =>
    Promise.resolve(() =>
      Promise.resolve({ provider: new MemoryStoreProvider(), close: () => Promise.resolve() }),
    ),
});

// Subjects are interned: a subject whose last message goes frees its id for the next new
// subject, and no message, index entry or filter may then read the wrong subject.
test('memory: subject ids reused after a subject empties', () => {
  const store = new MemoryStoreProvider().openStream(streamConfig('S', 'memory'));
  const none = Buffer.alloc(0);
  const put = (subject: string) => store.storeMsg(subject, none, Buffer.from(subject), 1);
  put('a.1'); // 1
  put('b.1'); // 2
  put('a.1'); // 3
  assert.equal(store.removeMsg(1), true);
  assert.equal(store.removeMsg(3), true); // a.1 is gone: its id is free
  put('c.1'); // 4, takes a.1's id
  put('b.1'); // 5
  const subjects = [2, 4, 5].map((seq) => store.loadMsg(seq)!.subject);
  assert.deepEqual(subjects, ['b.1', 'c.1', 'b.1']);
  assert.equal(store.loadMsg(4)!.data.toString(), 'c.1');
  assert.equal(store.loadNextMsg('a.1', false, 0), undefined);
  assert.equal(store.loadNextMsg('c.1', false, 0)!.seq, 4);
  assert.equal(store.loadNextMsg('b.*', true, 3)!.seq, 5);
  assert.equal(store.loadLastMsg('c.1')!.seq, 4);
  assert.deepEqual(store.filteredState(0, 'c.1'), { msgs: 1, first: 4, last: 4 });
  assert.deepEqual(store.filteredState(3, 'b.1'), { msgs: 1, first: 5, last: 5 });
  assert.deepEqual([...store.subjectsState('>').keys()].sort(), ['b.1', 'c.1']);
  assert.equal(store.purgeEx('b.1', 0, 0), 2);
  assert.equal(store.state().numSubjects, 1);
  put('d.1'); // 6, takes b.1's id
  assert.equal(store.loadLastMsg('>')!.subject, 'd.1');
  assert.equal(store.loadMsg(4)!.subject, 'c.1');
});
