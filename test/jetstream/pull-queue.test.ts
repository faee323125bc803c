// A pull consumer's waiting requests (src/jetstream/pull-queue.ts): the delivery path
// moves past served requests with a head index, and everything else sees only the
// requests not yet served, in their order, whatever was served, removed or added.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PullQueue, type PullRequest } from '../../src/jetstream/pull-queue.js';

function request(reply: string): PullRequest {
  return {
    reply,
    batch: 1,
    bytesLeft: Infinity,
    delivered: 0,
    expires: 0,
    noWait: false,
    hb: 0,
    hbNext: 0,
  };
}

const replies = (q: PullQueue): string[] => q.live().map((r) => r.reply);

test('served requests are passed over and dropped; the rest keep their order', () => {
  const q = new PullQueue();
  assert.equal(q.first(), undefined);
  for (const reply of ['a', 'b', 'c']) q.push(request(reply));
  assert.equal(q.size, 3);
  q.served(false);
  assert.equal(q.first()?.reply, 'a');
  q.served(true);
  assert.equal(q.first()?.reply, 'b');
  assert.equal(q.size, 2);
  q.served(true);
  // A request that comes while served ones still wait for live() goes after the rest.
  q.push(request('d'));
  assert.equal(q.first()?.reply, 'c');
  assert.equal(q.size, 2);
  assert.deepEqual(replies(q), ['c', 'd']);
  // live() dropped the served ones: serving goes on from the same request.
  assert.equal(q.first()?.reply, 'c');
  q.served(true);
  q.served(true);
  assert.equal(q.first(), undefined);
  assert.equal(q.size, 0);
  assert.deepEqual(replies(q), []);
});

test('remove takes out a request not yet served, never a served one', () => {
  const q = new PullQueue();
  const [a, b, c] = ['a', 'b', 'c'].map(request) as [PullRequest, PullRequest, PullRequest];
  for (const r of [a, b, c]) q.push(r);
  q.served(true);
  q.remove(a); // served already: nothing changes
  assert.equal(q.first(), b);
  q.remove(b); // the one being served (a no_wait request that found nothing more)
  assert.equal(q.first(), c);
  assert.equal(q.size, 1);
  q.remove(request('c')); // an equal request is not the same request
  assert.deepEqual(replies(q), ['c']);
});

test('live() is the array itself: what the caller splices out is gone', () => {
  const q = new PullQueue();
  for (const reply of ['a', 'b', 'c']) q.push(request(reply));
  q.served(true);
  const live = q.live();
  live.splice(1, 1); // an expired request
  assert.equal(q.size, 1);
  assert.equal(q.first()?.reply, 'b');
  assert.deepEqual(
    q
      .live()
      .splice(0)
      .map((r) => r.reply),
    ['b'],
  );
  assert.equal(q.size, 0);
});
