// The stream rules, as requests whose answers the reference (nats-server 2.9.10 -js)
// recorded in fixtures/streams.json (capture-reference-streams.ts) and wirebus must give
// again, in order, on a fresh server with a store directory: the config defaults of
// minimal and maximal creates, subject overlaps, limits and discard policies, retention
// (interest, workqueue and its consumer rules), the publish headers, rollups, deny and
// sealed, direct gets, republish, PubAck bodies, and what STREAM.UPDATE may change.

import type { ApiCase } from './api-cases.js';

export interface StreamCase extends ApiCase {
  /** Keep the reply's body as the exact text written (PubAcks: spacing included). */
  raw?: boolean;
  /** Also record the first message published on this subject (republish). */
  watch?: string;
  /** Send to the reply subject of the message delivered last (an ack) instead of `subject`. */
  ackLast?: boolean;
  /**
   * The reference runs mirrors and sources; wirebus refuses them until they arrive, with
   * the reference's answer to a config it can not use (checked instead of the recording).
   */
  refusedHere?: boolean;
  /** Wait this long first (limits by age need time to pass; nothing asserts a timing). */
  waitMs?: number;
}

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';

function req(name: string, verb: string, stream: string, body: unknown = null): StreamCase {
  return { name, subject: `${S}${verb}.${stream}`, body };
}

function create(name: string, cfg: { name: string } & Record<string, unknown>): StreamCase {
  return req(name, 'CREATE', cfg.name, cfg);
}

function update(name: string, cfg: { name: string } & Record<string, unknown>): StreamCase {
  return req(name, 'UPDATE', cfg.name, cfg);
}

function pub(name: string, subject: string, body = 'x', hdrs?: Record<string, string>): StreamCase {
  return { name, subject, body, raw: true, ...(hdrs === undefined ? {} : { headers: hdrs }) };
}

function consumer(name: string, stream: string, durable: string, cfg: object): StreamCase {
  return {
    name,
    subject: `${C}DURABLE.CREATE.${stream}.${durable}`,
    body: { stream_name: stream, config: { durable_name: durable, ...cfg } },
  };
}

function next(name: string, stream: string, durable: string): StreamCase {
  return { name, subject: `${C}MSG.NEXT.${stream}.${durable}`, body: { batch: 1, no_wait: true } };
}

/** A create of stream RC (subjects rc.*) with a republish the reference refuses. */
const badRepublish = (name: string, republish: object): StreamCase =>
  create(name, { name: 'RC', subjects: ['rc.*'], republish });

const refused = (c: StreamCase): StreamCase => ({ ...c, refusedHere: true });

const ack = (name: string): StreamCase => ({ name, subject: '', body: '+ACK', ackLast: true });

/** Every field set to something other than its default. */
function maximal(
  name: string,
  storage: string,
  p: string,
): { name: string } & Record<string, unknown> {
  return {
    name,
    description: 'every field',
    subjects: [`${p}.*`, `${p}.x.>`],
    retention: 'limits',
    max_consumers: 10,
    max_msgs: 100,
    max_bytes: 1_000_000,
    max_age: 3_600_000_000_000,
    max_msgs_per_subject: 5,
    max_msg_size: 1024,
    discard: 'new',
    storage,
    num_replicas: 1,
    duplicate_window: 60_000_000_000,
    placement: { cluster: 'c1', tags: ['t1'] },
    republish: { src: `${p}.>`, dest: `rp${p}.>`, headers_only: true },
    allow_direct: true,
    mirror_direct: false,
    discard_new_per_subject: true,
    sealed: false,
    deny_delete: true,
    deny_purge: true,
    allow_rollup_hdrs: false,
  };
}

const defaults: StreamCase[] = [
  create('minimal memory', { name: 'MINM', storage: 'memory' }),
  create('minimal file', { name: 'MINF' }),
  create('minimal: max_age sets the duplicate window', { name: 'MINA', max_age: 30e9 }),
  create('minimal: no_ack and template owner', { name: 'MINN', no_ack: true, template_owner: 'T' }),
  create('maximal memory', maximal('MAXM', 'memory', 'maxm')),
  create('maximal file', maximal('MAXF', 'file', 'maxf')),
  req('info maximal memory', 'INFO', 'MAXM'),
  req('info maximal file', 'INFO', 'MAXF'),
  create('republish without a source', {
    name: 'RPS',
    subjects: ['rps.*'],
    republish: { dest: 'rpso.>' },
  }),
  refused(create('mirror', { name: 'MIR', mirror: { name: 'MINM' } })),
  create('mirror with subjects', { name: 'MIR', subjects: ['mir'], mirror: { name: 'MINM' } }),
  create('mirror with sources', {
    name: 'MIR',
    mirror: { name: 'MINM' },
    sources: [{ name: 'MINF' }],
  }),
  refused(create('sources', { name: 'SRC', sources: [{ name: 'MINM' }] })),
  create('mirror_direct without a mirror', { name: 'MD', mirror_direct: true }),
];

const overlaps: StreamCase[] = [
  create('fields of later versions are ignored', {
    name: 'LATER',
    subjects: ['later'],
    first_seq: 5,
    compression: 's2',
    metadata: { a: 'b' },
    subject_transform: { src: '>', dest: 'x.>' },
    storage: 'memory',
  }),
  create('duplicates window larger than max age', {
    name: 'BAD',
    max_age: 1e9,
    duplicate_window: 2e9,
  }),
  create('duplicates window negative', { name: 'BAD', duplicate_window: -1 }),
  create('duplicates window too small', { name: 'BAD', duplicate_window: 1000 }),
  create('name too long', { name: 'N'.repeat(256) }),
  create('description too long', { name: 'BAD', description: 'd'.repeat(4097) }),
  create('discard new per subject without a per-subject limit', {
    name: 'BAD',
    discard: 'new',
    discard_new_per_subject: true,
  }),
  create('storage unknown', { name: 'BAD', storage: 'disk' }),
  create('discard unknown', { name: 'BAD', discard: 'none' }),
  create('retention in capitals', { name: 'CAPS', retention: 'Limits' }),
  create('storage in capitals', { name: 'CAPS', storage: 'Memory' }),
  create('retention null', { name: 'CAPS', retention: null }),
  // No `storage: "any"`: nats-server 2.9.10 crashes on it (a nil store); wirebus answers
  // invalid JSON, as for any other word it does not know.
  create('nulls elsewhere', { name: 'CAPS', subjects: null, max_msgs: null, sealed: null }),
  pub('expected last sequence 0 on an empty stream', 'CAPS', 'x', {
    'Nats-Expected-Last-Sequence': '0',
  }),
  create('wildcards', { name: 'W', subjects: ['w.*.a', 'x.>'] }),
  create('wildcards overlapping each other', { name: 'W2', subjects: ['v.*', 'v.>'] }),
  create('literal inside a wildcard of another stream', { name: 'W3', subjects: ['w.b.a'] }),
  create('wildcard over a literal of another stream', { name: 'W3', subjects: ['w.*'] }),
  create('full wildcard over every stream', { name: 'W3', subjects: ['>'] }),
  create('the api, a literal', { name: 'W3', subjects: ['$JS.API.INFO'] }),
  create('the api, a wildcard inside', { name: 'W3', subjects: ['$JS.API.*'] }),
  create('the api, a stream wildcard inside', { name: 'W3', subjects: ['$JS.API.STREAM.>'] }),
  create('the api, a wildcard above', { name: 'W3', subjects: ['$JS.>'] }),
  req('delete the stream above the api', 'DELETE', 'W3'),
  create('acks', { name: 'W4', subjects: ['$JS.ACK.>'] }),
  req('delete acks', 'DELETE', 'W4'),
  create('events', { name: 'W5', subjects: ['$JS.EVENT.>'] }),
  req('delete events', 'DELETE', 'W5'),
  create('system', { name: 'W6', subjects: ['$SYS.>'] }),
  req('delete system', 'DELETE', 'W6'),
  create('inbox', { name: 'W7', subjects: ['_INBOX.>'] }),
  req('delete inbox', 'DELETE', 'W7'),
  create('a wildcard in the middle', { name: 'W8', subjects: ['u.*.c', 'u.b.*'] }),
  create('a partial wildcard token', { name: 'W8', subjects: ['u.b*'] }),
  create('an empty token', { name: 'W8', subjects: ['u.'] }),
  create('a space in a subject', { name: 'W8', subjects: ['u b'] }),
  create('distinct wildcards', { name: 'W8', subjects: ['u.*.c', 'u.*.d'] }),
  update('update into another stream', { name: 'W8', subjects: ['u.*.c', 'w.b.a'] }),
  update('update adds a subject', { name: 'W8', subjects: ['u.*.c', 'u.*.d', 'u.e'] }),
  pub('publish on an added subject', 'u.e'),
];

const limits: StreamCase[] = [
  create('max_msgs, discard old', {
    name: 'LM',
    subjects: ['lm.*'],
    storage: 'memory',
    max_msgs: 2,
  }),
  pub('lm 1', 'lm.a'),
  pub('lm 2', 'lm.b'),
  pub('lm 3', 'lm.a'),
  req('lm info', 'INFO', 'LM'),
  create('max_msgs, discard new', {
    name: 'LN',
    subjects: ['ln.*'],
    max_msgs: 2,
    discard: 'new',
  }),
  pub('ln 1', 'ln.a'),
  pub('ln 2', 'ln.a'),
  pub('ln 3 refused', 'ln.a'),
  req('ln info', 'INFO', 'LN'),
  create('max_bytes, discard new', {
    name: 'LB',
    subjects: ['lb'],
    max_bytes: 100,
    discard: 'new',
    storage: 'memory',
  }),
  pub('lb fits', 'lb', 'y'.repeat(40)),
  pub('lb too many bytes', 'lb', 'y'.repeat(80)),
  create('max_bytes, discard old', { name: 'LO', subjects: ['lo'], max_bytes: 100 }),
  pub('lo 1', 'lo', 'y'.repeat(40)),
  pub('lo 2', 'lo', 'y'.repeat(40)),
  pub('lo 3', 'lo', 'y'.repeat(40)),
  req('lo info', 'INFO', 'LO'),
  pub('lo larger than the stream', 'lo', 'y'.repeat(200)),
  create('max_msg_size', { name: 'LS', subjects: ['ls'], max_msg_size: 10, storage: 'memory' }),
  pub('ls fits', 'ls', '0123456789'),
  pub('ls too large', 'ls', '01234567890'),
  pub('ls headers count', 'ls', '0123', { A: 'bcdefgh' }),
  create('max_bytes, discard new, file', {
    name: 'LBF',
    subjects: ['lbf'],
    max_bytes: 100,
    discard: 'new',
  }),
  pub('lbf fits', 'lbf', 'y'.repeat(40)),
  pub('lbf too many bytes', 'lbf', 'y'.repeat(80)),
  req('lbf info', 'INFO', 'LBF'),
  create('max_msgs_per_subject', {
    name: 'LP',
    subjects: ['lp.*'],
    max_msgs_per_subject: 1,
    storage: 'memory',
  }),
  pub('lp a', 'lp.a', '1'),
  pub('lp a again', 'lp.a', '2'),
  pub('lp b', 'lp.b', '3'),
  req('lp info', 'INFO', 'LP', { subjects_filter: '>' }),
  create('discard new per subject', {
    name: 'LD',
    subjects: ['ld.*'],
    max_msgs_per_subject: 1,
    discard: 'new',
    discard_new_per_subject: true,
  }),
  pub('ld a', 'ld.a'),
  pub('ld b', 'ld.b'),
  pub('ld a refused', 'ld.a'),
  create('discard new, per subject limit without the flag', {
    name: 'LE',
    subjects: ['le.*'],
    max_msgs_per_subject: 1,
    discard: 'new',
    storage: 'memory',
  }),
  pub('le a', 'le.a'),
  pub('le a replaces', 'le.a'),
  req('le info', 'INFO', 'LE'),
  create('max_age', { name: 'LA', subjects: ['la'], max_age: 200_000_000, storage: 'memory' }),
  pub('la 1', 'la'),
  pub('la 2', 'la'),
  { ...req('la info after the age', 'INFO', 'LA'), waitMs: 1500 },
  // The reference's file store reports an emptied stream's first_ts as 1970-01-01 (its
  // empty block's zero timestamp), not 0001-01-01: so does wirebus's (EMPTIED_FIRST_TS).
  create('max_age, file', { name: 'LAF', subjects: ['laf'], max_age: 200_000_000 }),
  pub('laf 1', 'laf'),
  { ...req('laf info after the age', 'INFO', 'LAF'), waitMs: 1500 },
  create('max_consumers', { name: 'LC', subjects: ['lc'], max_consumers: 1, storage: 'memory' }),
  consumer('lc first consumer', 'LC', 'c1', {}),
  consumer('lc second consumer', 'LC', 'c2', {}),
  consumer('lc first consumer again', 'LC', 'c1', {}),
  req('lc info', 'INFO', 'LC'),
];

const dedupe: StreamCase[] = [
  create('duplicate window', { name: 'DW', subjects: ['dw'], duplicate_window: 200_000_000 }),
  pub('dw with id', 'dw', 'a', { 'Nats-Msg-Id': 'm1' }),
  pub('dw duplicate', 'dw', 'a', { 'Nats-Msg-Id': 'm1' }),
  pub('dw another id', 'dw', 'b', { 'Nats-Msg-Id': 'm2' }),
  { ...pub('dw same id after the window', 'dw', 'a', { 'Nats-Msg-Id': 'm1' }), waitMs: 1200 },
  pub('expected last msg id right', 'dw', 'c', { 'Nats-Expected-Last-Msg-Id': 'm1' }),
  pub('expected last msg id after a message without one', 'dw', 'c', {
    'Nats-Expected-Last-Msg-Id': 'm1',
  }),
  pub('expected stream right', 'dw', 'd', { 'Nats-Expected-Stream': 'DW' }),
  pub('expected last sequence wrong', 'dw', 'e', { 'Nats-Expected-Last-Sequence': '2' }),
  pub('expected last sequence not a number', 'dw', 'e', { 'Nats-Expected-Last-Sequence': 'z' }),
  pub('expected last subject sequence 0 on a used subject', 'dw', 'f', {
    'Nats-Expected-Last-Subject-Sequence': '0',
  }),
  create('subjects for last subject sequence', { name: 'DS', subjects: ['ds.*'] }),
  pub('expected last subject sequence 0 on a new subject', 'ds.a', 'g', {
    'Nats-Expected-Last-Subject-Sequence': '0',
  }),
  pub('expected last subject sequence of another subject', 'ds.b', 'g', {
    'Nats-Expected-Last-Subject-Sequence': '1',
  }),
  pub('expected stream wrong with an id', 'ds.a', 'h', {
    'Nats-Expected-Stream': 'no',
    'Nats-Msg-Id': 'i1',
  }),
  pub('the id was not kept', 'ds.a', 'h', { 'Nats-Msg-Id': 'i1' }),
  create('no_ack', { name: 'NA', subjects: ['na'], no_ack: true }),
  { ...pub('no_ack publish', 'na'), noReply: true },
  req('no_ack info', 'INFO', 'NA'),
  update('no_ack sealed', { name: 'NA', subjects: ['na'], no_ack: true, sealed: true }),
  pub('a sealed no_ack stream answers a publish', 'na'),
];

const rollups: StreamCase[] = [
  create('rollups allowed', {
    name: 'RU',
    subjects: ['ru.*'],
    allow_rollup_hdrs: true,
    storage: 'memory',
  }),
  pub('ru a 1', 'ru.a'),
  pub('ru a 2', 'ru.a'),
  pub('ru b 1', 'ru.b'),
  pub('ru rollup sub', 'ru.a', 'r', { 'Nats-Rollup': 'sub' }),
  req('ru after sub', 'INFO', 'RU', { subjects_filter: '>' }),
  // No INFO after a roll-up of all on a memory stream: the reference's memory store
  // keeps counting the subjects it purged (a bug); wirebus answers as its file store.
  pub('ru rollup all', 'ru.c', 'r', { 'Nats-Rollup': 'all' }),
  create('rollups allowed, file', { name: 'RUF', subjects: ['ruf.*'], allow_rollup_hdrs: true }),
  pub('ruf a 1', 'ruf.a'),
  pub('ruf b 1', 'ruf.b'),
  pub('ruf rollup all', 'ruf.c', 'r', { 'Nats-Rollup': 'all' }),
  req('ruf after all', 'INFO', 'RUF', { subjects_filter: '>' }),
  { ...pub('ruf rollup bad value', 'ruf.c', 'r', { 'Nats-Rollup': 'x' }), noReply: true },
  req('ruf after the bad value', 'INFO', 'RUF'),
  create('interest, file', { name: 'INF', subjects: ['inf'], retention: 'interest' }),
  pub('inf without consumers', 'inf'),
  req('inf info, nothing kept', 'INFO', 'INF'),
  update('ru deny purge with rollups', {
    name: 'RU',
    subjects: ['ru.*'],
    storage: 'memory',
    allow_rollup_hdrs: true,
    deny_purge: true,
  }),
];

const deny: StreamCase[] = [
  create('deny delete and purge', {
    name: 'DN',
    subjects: ['dn'],
    deny_delete: true,
    deny_purge: true,
  }),
  pub('dn 1', 'dn'),
  pub('dn 2', 'dn'),
  req('dn delete refused', 'MSG.DELETE', 'DN', { seq: 1 }),
  req('dn purge refused', 'PURGE', 'DN'),
  update('dn cancel deny delete', { name: 'DN', subjects: ['dn'], deny_purge: true }),
  update('dn cancel deny purge', { name: 'DN', subjects: ['dn'], deny_delete: true }),
  update('dn seal', {
    name: 'DN',
    subjects: ['dn'],
    deny_delete: true,
    deny_purge: true,
    sealed: true,
    max_age: 3600e9,
    discard: 'old',
    allow_rollup_hdrs: false,
  }),
  pub('dn publish to sealed', 'dn'),
  req('dn delete stream', 'DELETE', 'DN'),
  create('sealed', { name: 'SE', subjects: ['se'], storage: 'memory', allow_rollup_hdrs: true }),
  pub('se 1', 'se'),
  update('se seal', {
    name: 'SE',
    subjects: ['se'],
    storage: 'memory',
    sealed: true,
    max_age: 3600e9,
    allow_rollup_hdrs: true,
  }),
  pub('se publish refused', 'se'),
  req('se delete msg refused', 'MSG.DELETE', 'SE', { seq: 1 }),
  req('se purge refused', 'PURGE', 'SE'),
  update('se unseal', { name: 'SE', subjects: ['se'], storage: 'memory' }),
  update('se sealed with more subjects and a limit', {
    name: 'SE',
    subjects: ['se', 'se2'],
    storage: 'memory',
    sealed: true,
    max_msgs: 5,
  }),
  req('se info', 'INFO', 'SE'),
  consumer('se consumer on sealed', 'SE', 'c', {}),
  next('se consume sealed', 'SE', 'c'),
];

const direct: StreamCase[] = [
  create('no direct', { name: 'ND', subjects: ['nd'], storage: 'memory' }),
  pub('nd 1', 'nd'),
  { name: 'nd direct get', subject: '$JS.API.DIRECT.GET.ND', body: { seq: 1 } },
  update('nd allow direct', {
    name: 'ND',
    subjects: ['nd'],
    storage: 'memory',
    allow_direct: true,
  }),
  { name: 'nd direct get allowed', subject: '$JS.API.DIRECT.GET.ND', body: { seq: 1 } },
  update('nd disallow direct', { name: 'ND', subjects: ['nd'], storage: 'memory' }),
  { name: 'nd direct get again', subject: '$JS.API.DIRECT.GET.ND', body: { seq: 1 } },
  update('nd mirror direct', {
    name: 'ND',
    subjects: ['nd'],
    storage: 'memory',
    mirror_direct: true,
  }),
];

const republish: StreamCase[] = [
  create('republish', {
    name: 'RP',
    subjects: ['rp.*'],
    republish: { src: 'rp.*', dest: 'out.$1' },
  }),
  { ...pub('rp plain', 'rp.a', 'hello'), watch: 'out.a' },
  { ...pub('rp second on the subject', 'rp.a', 'again'), watch: 'out.a' },
  {
    ...pub('rp with headers', 'rp.b', 'hdr', { 'X-Mine': 'v', 'Nats-Msg-Id': 'k' }),
    watch: 'out.b',
  },
  create('republish with wildcard functions', {
    name: 'RF',
    subjects: ['rf.*.*'],
    republish: {
      src: 'rf.*.*',
      dest: 'outf.{{wildcard(2)}}.{{partition(3,1,2)}}.{{ splitFromLeft(1, 2) }}',
    },
    storage: 'memory',
  }),
  { ...pub('rf mapped', 'rf.abcdef.k', 'f'), watch: 'outf.>' },
  create('republish with slicing functions', {
    name: 'RS',
    subjects: ['rs.*'],
    republish: {
      src: 'rs.*',
      dest: 'outs.{{splitFromRight(1,2)}}.{{SliceFromLeft(1,3)}}.{{sliceFromRight(1,3)}}.{{split(1,-)}}.$1',
    },
    storage: 'memory',
  }),
  { ...pub('rs mapped', 'rs.ab-cdefgh', 's'), watch: 'outs.>' },
  badRepublish('republish dest with a * token', { src: 'rc.*', dest: 'o.*' }),
  badRepublish('republish dest without the wildcard', { src: 'rc.*', dest: 'o.x' }),
  badRepublish('republish dest, a wildcard out of range', { src: 'rc.*', dest: 'o.$2' }),
  badRepublish('republish dest, an unknown function', { src: 'rc.*', dest: 'o.{{nope(1)}}' }),
  create('republish literal to literal', {
    name: 'RL',
    subjects: ['rl.*'],
    republish: { src: 'rl.a', dest: 'outl' },
    storage: 'memory',
  }),
  { ...pub('rl mapped', 'rl.a', 'l'), watch: 'outl' },
  create('republish headers only', {
    name: 'RH',
    subjects: ['rh.>'],
    republish: { src: 'rh.>', dest: 'outh.>', headers_only: true },
    storage: 'memory',
  }),
  { ...pub('rh plain', 'rh.a.b', 'twelve bytes'), watch: 'outh.a.b' },
  { ...pub('rh with headers', 'rh.c', 'abc', { 'X-Mine': 'v' }), watch: 'outh.c' },
  create('republish partial source', {
    name: 'RQ',
    subjects: ['rq.*'],
    republish: { src: 'rq.a', dest: 'outq' },
  }),
  { ...pub('rq outside the source', 'rq.b', 'no'), watch: 'outq' },
  { ...pub('rq inside the source', 'rq.a', 'yes'), watch: 'outq' },
  badRepublish('republish cycle', { src: 'rc.*', dest: 'rc.x' }),
  badRepublish('republish cycle by wildcard', { dest: '>' }),
  badRepublish('republish source outside', { src: 'q.*', dest: 'o' }),
  badRepublish('republish bad mapping', { src: 'rc.*', dest: 'o.*.*' }),
  badRepublish('republish no destination', { src: 'rc.*' }),
  badRepublish('republish bad destination', { src: 'rc.*', dest: 'o..x' }),
  update('republish change refused', {
    name: 'RP',
    subjects: ['rp.*'],
    republish: { src: 'rp.*', dest: 'out2.$1' },
  }),
  update('republish removal refused', { name: 'RP', subjects: ['rp.*'] }),
];

const retention: StreamCase[] = [
  create('interest', { name: 'IN', subjects: ['in.*'], retention: 'interest', storage: 'memory' }),
  pub('in without consumers', 'in.a'),
  req('in info, nothing kept', 'INFO', 'IN'),
  consumer('in consumer', 'IN', 'c1', { ack_policy: 'explicit', filter_subject: 'in.a' }),
  pub('in outside the filter', 'in.b'),
  pub('in kept', 'in.a'),
  req('in info', 'INFO', 'IN'),
  next('in fetch', 'IN', 'c1'),
  ack('in ack'),
  { ...req('in info after the ack', 'INFO', 'IN'), waitMs: 200 },
  update('in to limits refused', { name: 'IN', subjects: ['in.*'], storage: 'memory' }),
  create('workqueue', { name: 'WQ', subjects: ['wq.*'], retention: 'workqueue' }),
  consumer('wq ack none refused', 'WQ', 'n', { ack_policy: 'none' }),
  consumer('wq ack all refused', 'WQ', 'n', { ack_policy: 'all' }),
  consumer('wq deliver last refused', 'WQ', 'n', {
    ack_policy: 'explicit',
    filter_subject: 'wq.n',
    deliver_policy: 'last',
  }),
  consumer('wq first', 'WQ', 'a', { ack_policy: 'explicit', filter_subject: 'wq.a' }),
  consumer('wq same filter', 'WQ', 'b', { ack_policy: 'explicit', filter_subject: 'wq.a' }),
  consumer('wq wildcard over it', 'WQ', 'b', { ack_policy: 'explicit', filter_subject: 'wq.*' }),
  consumer('wq no filter', 'WQ', 'b', { ack_policy: 'explicit' }),
  consumer('wq other filter', 'WQ', 'b', { ack_policy: 'explicit', filter_subject: 'wq.b' }),
  consumer('wq push', 'WQ', 'p', {
    ack_policy: 'explicit',
    filter_subject: 'wq.c',
    deliver_subject: 'dp',
  }),
  consumer('wq first again', 'WQ', 'a', { ack_policy: 'explicit', filter_subject: 'wq.a' }),
  pub('wq a', 'wq.a', 'job'),
  pub('wq d, no consumer', 'wq.d', 'job'),
  req('wq info', 'INFO', 'WQ'),
  next('wq fetch', 'WQ', 'a'),
  ack('wq ack'),
  { ...req('wq info after the ack', 'INFO', 'WQ'), waitMs: 200 },
  { name: 'wq delete a', subject: `${C}DELETE.WQ.a`, body: null },
  consumer('wq now a wildcard', 'WQ', 'w', { ack_policy: 'explicit', filter_subject: 'wq.*' }),
  {
    name: 'wq ephemeral over it',
    subject: `${C}CREATE.WQ`,
    body: { stream_name: 'WQ', config: { ack_policy: 'explicit', filter_subject: 'wq.q' } },
  },
  update('wq to interest refused', { name: 'WQ', subjects: ['wq.*'], retention: 'interest' }),
];

const updates: StreamCase[] = [
  create('to update', { name: 'UP', subjects: ['up'], storage: 'memory', max_consumers: 4 }),
  update('name in body differs', { name: 'UPX', subjects: ['up'], storage: 'memory' }),
  { name: 'name missing', subject: `${S}UPDATE.UP`, body: { subjects: ['up'] } },
  update('max_consumers', { name: 'UP', subjects: ['up'], storage: 'memory', max_consumers: 5 }),
  update('storage', { name: 'UP', subjects: ['up'], max_consumers: 4 }),
  update('retention', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    retention: 'workqueue',
  }),
  update('template owner', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    template_owner: 'T',
  }),
  update('replicas', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    num_replicas: 3,
  }),
  update('replicas too many', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    num_replicas: 7,
  }),
  update('mirror', { name: 'UP', storage: 'memory', max_consumers: 4, mirror: { name: 'MINM' } }),
  refused(
    update('sources', {
      name: 'UP',
      subjects: ['up'],
      storage: 'memory',
      max_consumers: 4,
      sources: [{ name: 'MINM' }],
    }),
  ),
  update('max_age below 100ms', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    max_age: 5,
  }),
  update('discard new per subject without discard new', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    discard_new_per_subject: true,
    max_msgs_per_subject: 2,
  }),
  update('everything that may change', {
    name: 'UP',
    description: 'changed',
    subjects: ['up', 'up2.*'],
    storage: 'memory',
    max_consumers: 4,
    max_msgs: 9,
    max_bytes: 9000,
    max_age: 60e9,
    max_msgs_per_subject: 3,
    max_msg_size: 512,
    discard: 'new',
    duplicate_window: 1e9,
    no_ack: true,
    allow_direct: true,
    discard_new_per_subject: true,
    deny_delete: true,
    allow_rollup_hdrs: true,
    placement: { tags: ['x'] },
  }),
  update('republish added refused', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    republish: { dest: 'z' },
  }),
  req('info after the updates', 'INFO', 'UP'),
  pub('up 1', 'up'),
  pub('up 2', 'up'),
  pub('up 3', 'up'),
  update('a lower max_msgs applies at once', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    max_msgs: 1,
    deny_delete: true,
  }),
  update('the same config again', {
    name: 'UP',
    subjects: ['up'],
    storage: 'memory',
    max_consumers: 4,
    max_msgs: 1,
    deny_delete: true,
  }),
  update('a subject removed', {
    name: 'UP',
    subjects: ['up2'],
    storage: 'memory',
    max_consumers: 4,
    deny_delete: true,
  }),
  pub('up on the removed subject', 'up'),
  req('info after the subject went', 'INFO', 'UP'),
  update('a minimal body', { name: 'UP' }),
  { name: 'update: not JSON', subject: `${S}UPDATE.UP`, body: '{x' },
  { name: 'update: wrong type', subject: `${S}UPDATE.UP`, body: { name: 'UP', sealed: 'yes' } },
];

export const STREAM_CASES: StreamCase[] = [
  ...defaults,
  ...overlaps,
  ...limits,
  ...dedupe,
  ...rollups,
  ...deny,
  ...direct,
  ...republish,
  ...retention,
  ...updates,
];

/** On a server in JetStream domain `hub`: PubAcks and stream answers name it. */
export const DOMAIN = 'hub';
export const DOMAIN_CASES: StreamCase[] = [
  create('domain: create', { name: 'DOM', subjects: ['dom.*'], storage: 'memory' }),
  pub('domain: publish', 'dom.a'),
  pub('domain: with an id', 'dom.a', 'x', { 'Nats-Msg-Id': 'd1' }),
  pub('domain: duplicate', 'dom.a', 'x', { 'Nats-Msg-Id': 'd1' }),
  pub('domain: expected stream wrong', 'dom.a', 'x', { 'Nats-Expected-Stream': 'X' }),
  req('domain: info', 'INFO', 'DOM'),
  { name: 'domain: list', subject: `${S}LIST`, body: null },
  update('domain: update', { name: 'DOM', subjects: ['dom.*'], storage: 'memory', max_msgs: 5 }),
  req('domain: delete', 'DELETE', 'DOM'),
];
