// API requests whose answers show how a stream's storage behaves (deletes, limits, purge,
// last and next by subject), sent on memory streams and on file streams. The reference
// (nats-server 2.9.10 -js) recorded its answers in fixtures/storage.json; wirebus's two
// stores must give them again. Where the reference's own two stores disagree (a bug in
// one of them), the case says which store was right, and wirebus answers as that one
// for both storage types.

import type { ApiCase } from './api-cases.js';

export type StoreKind = 'memory' | 'file';

export interface StorageCase extends ApiCase {
  /** The reference's memory and file stores disagree here; this one is right. */
  readonly sameAs?: StoreKind;
}

const S = '$JS.API.STREAM.';

/** The stream name and subject prefix of one storage type, as the cases use them. */
export function names(storage: StoreKind): { stream: string; prefix: string } {
  return storage === 'memory'
    ? { stream: 'MEM', prefix: 'memory.' }
    : { stream: 'FILE', prefix: 'file.' };
}

function casesFor(storage: StoreKind): StorageCase[] {
  const { stream: name, prefix: p } = names(storage);
  const pub = (subject: string, n: number): StorageCase => ({
    name: `${storage}: publish ${subject} #${n}`,
    subject: p + subject,
    body: `m${n}`,
  });
  const req = (what: string, verb: string, body: unknown, sameAs?: StoreKind): StorageCase => ({
    name: `${storage}: ${what}`,
    subject: `${S}${verb}.${name}`,
    body,
    ...(sameAs === undefined ? {} : { sameAs }),
  });
  const cfg = {
    name,
    storage,
    subjects: [`${p}k.>`, `${p}audit`, `${p}x`, `${p}q.>`],
    max_msgs_per_subject: 3,
  };
  const out: StorageCase[] = [
    req('create', 'CREATE', cfg),
    pub('audit', 1),
    pub('audit', 2),
    pub('x', 3),
    pub('audit', 4),
    req('next by subject', 'MSG.GET', { seq: 2, next_by_subj: `${p}audit` }),
    req('erase an interior message', 'MSG.DELETE', { seq: 2 }),
    req('delete with no_erase', 'MSG.DELETE', { seq: 3, no_erase: true }),
    req('delete it again', 'MSG.DELETE', { seq: 3 }),
    pub('x', 5),
    req('info with deleted details', 'INFO', { deleted_details: true, subjects_filter: '>' }),
  ];
  // 12 messages on three keys (sequences 6 to 17): the limit of 3 per subject keeps 9,
  // then a limit of 1 keeps the last of each.
  for (let i = 6; i <= 17; i++) out.push(pub(`k.${'abc'[i % 3]!}`, i));
  out.push(
    req('a lower per-subject limit applies at once', 'UPDATE', { ...cfg, max_msgs_per_subject: 1 }),
    req('subjects after the lower limit', 'INFO', { subjects_filter: `${p}k.>` }),
    req('purge with seq and keep', 'PURGE', { seq: 5, keep: 1 }),
    pub('x', 18),
    pub('audit', 19),
    req('purge keeping 2', 'PURGE', { keep: 2 }),
    req('info after keep', 'INFO', { deleted_details: true }, 'file'),
    pub('k.a', 20),
    pub('k.b', 21),
    pub('k.a', 22),
    req('purge a subject keeping 1', 'PURGE', { filter: `${p}k.*`, keep: 1 }, 'file'),
    req('purge a subject up to a sequence', 'PURGE', { filter: `${p}k.*`, seq: 22 }),
    req('info after that', 'INFO', { deleted_details: true, subjects_filter: '>' }, 'file'),
    pub('x', 23),
    req('purge up to a stored sequence', 'PURGE', { seq: 23 }),
    req('info after compact', 'INFO', { deleted_details: true }, 'file'),
    req('lift the per-subject limit', 'UPDATE', { ...cfg, max_msgs_per_subject: -1 }, 'file'),
    // The last of a subject deleted: the one before it is the last by subject (the
    // reference's file store answers 404 here: its subject index keeps the deleted one).
    pub('q.a', 24),
    pub('q.a', 25),
    req('delete the last of a subject', 'MSG.DELETE', { seq: 25 }),
    req('last by subject after its last went', 'MSG.GET', { last_by_subj: `${p}q.a` }, 'memory'),
    // Purge up to a deleted sequence (the reference's memory store fails with
    // "no message found": its Compact wants a stored message there). No info after it: the
    // reference's file store then reports the deleted sequence as first_seq (wirebus's
    // first_seq is always a stored message: 27).
    pub('x', 26),
    pub('x', 27),
    req('delete 26', 'MSG.DELETE', { seq: 26 }),
    req('purge up to a deleted sequence', 'PURGE', { seq: 26 }, 'file'),
    // Purge past the end (the reference's memory store keeps counting the purged subjects).
    req('purge past the end', 'PURGE', { seq: 40 }, 'file'),
    req('info after purge past the end', 'INFO', null, 'file'),
    pub('x', 40),
    req('delete', 'DELETE', null),
  );
  return out;
}

export const STORAGE_CASES: StorageCase[] = [...casesFor('memory'), ...casesFor('file')];
