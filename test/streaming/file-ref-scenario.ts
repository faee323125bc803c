// One scripted workload and one observation of a FILE store, shared by the
// reference-compatibility tests and the capture that wrote
// fixtures/stan-ref-file/ (file-ref-capture.ts):
//
// - writeScenario() leaves every record type the reference writes: messages over
//   several slices (slice_max_msgs 4), a channel whose max_msgs dropped whole slices
//   (first sequence > 1), a channel deleted by max_inactivity, a durable with acked
//   and pending messages, a durable queue group, an unsubscribed subscription, a
//   closed durable, clients that registered and closed and clients still registered.
// - observe() is what a server shows of such a directory once restarted on it: the
//   monitoring endpoints, every message of each channel by sequence (data and
//   timestamp), and the redeliveries a resumed durable gets.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startWirebus } from '../helpers/process.js';
import { startReference } from './stan-reference.js';
import {
  closeStan,
  connect,
  eventually,
  getJson,
  publish,
  sleep,
  subscribe,
  unsubscribe,
  type Stan,
} from './stan.js';

export const CLUSTER_ID = 'ref-file';

export const FIXTURE_DIR = fileURLToPath(
  new URL('../../../test/streaming/fixtures/stan-ref-file/', import.meta.url),
);

/** The streaming config (-sc) both servers run the scenario and the observation with. */
export function scenarioConfig(dir: string): string {
  return `streaming {
  cluster_id: "${CLUSTER_ID}"
  store: "file"
  dir: "${dir}"
  file_options { slice_max_msgs: 4 }
  store_limits {
    channels {
      "lim": { max_msgs: 6 }
      "tmp": { max_inactivity: "1s" }
    }
  }
}
`;
}

export interface Running {
  readonly url: string;
  /** Monitoring base URL. */
  readonly http: string;
  stop(): Promise<void>;
}

/** wirebus or the reference on free ports, with scenarioConfig(dir) written in `work`. */
export async function serveScenario(
  kind: 'wirebus' | 'reference',
  dir: string,
  work: string,
): Promise<Running> {
  const conf = join(work, `${kind}-${Date.now()}.conf`);
  await writeFile(conf, scenarioConfig(dir));
  const port = await freePort();
  const mport = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port), '-m', String(mport), '-sc', conf];
  const ready = 'Streaming Server is ready';
  const proc =
    kind === 'wirebus'
      ? await startWirebus(port, args.slice(4), ready)
      : await startReference(args, ready);
  return {
    url: `nats://127.0.0.1:${port}`,
    http: `http://127.0.0.1:${mport}`,
    stop: () => proc.stop(),
  };
}

/** The payload of message `seq` on `channel`: text, then bytes of every value. */
export function payload(channel: string, seq: number): Buffer {
  const tail = Buffer.alloc(seq % 7, seq * 37);
  return Buffer.concat([Buffer.from(`${channel}:${seq}:`), tail]);
}

async function publishSeq(sc: Stan, channel: string, from: number, to: number): Promise<void> {
  for (let seq = from; seq <= to; seq++) await publish(sc, channel, payload(channel, seq));
}

export async function writeScenario(url: string, http: string): Promise<void> {
  const pub = await connect(url, CLUSTER_ID, 'pub1');
  await publishSeq(pub, 'foo', 1, 10);
  await publishSeq(pub, 'lim', 1, 15);
  await publishSeq(pub, 'tmp', 1, 1);

  // A durable acking 1..6 but 4: 4 and 7..10 stay pending.
  const subber = await connect(url, CLUSTER_ID, 'subber');
  const durOpts = subber
    .subscriptionOptions()
    .setDurableName('dur')
    .setManualAckMode(true)
    .setMaxInFlight(100)
    .setDeliverAllAvailable();
  const dur = await subscribe(subber, 'foo', durOpts, undefined, (m) => {
    const s = m.getSequence();
    if (s <= 6 && s !== 4) m.ack();
  });
  await dur.waitFor(10);

  // A durable queue group of two members acking even sequences only.
  const q1 = await connect(url, CLUSTER_ID, 'q1');
  const q2 = await connect(url, CLUSTER_ID, 'q2');
  const qOpts = (sc: Stan): ReturnType<Stan['subscriptionOptions']> =>
    sc
      .subscriptionOptions()
      .setDurableName('qdur')
      .setManualAckMode(true)
      .setMaxInFlight(3)
      .setDeliverAllAvailable();
  let queued = 0;
  const onQueued = (m: { getSequence(): number; ack(): void }): void => {
    queued++;
    if (m.getSequence() % 2 === 0) m.ack();
  };
  await subscribe(q1, 'foo', qOpts(q1), 'workers', onQueued);
  await subscribe(q2, 'foo', qOpts(q2), 'workers', onQueued);
  await eventually(() => queued >= 6, 'queue deliveries');

  // A plain subscription removed again, and a durable on lim closed (kept, offline).
  const subber2 = await connect(url, CLUSTER_ID, 'subber2');
  const plain = await subscribe(subber2, 'foo', subber2.subscriptionOptions());
  await unsubscribe(plain.sub);
  const limDur = await subscribe(
    subber2,
    'lim',
    subber2
      .subscriptionOptions()
      .setDurableName('dur2')
      .setManualAckMode(true)
      .setDeliverAllAvailable(),
    undefined,
    (m) => {
      m.ack();
    },
  );
  await limDur.waitFor(6);
  await sleep(100);
  await unsubscribe(limDur.sub, true);

  // A client that came and went.
  await closeStan(await connect(url, CLUSTER_ID, 'gone'));
  await closeStan(subber);
  await closeStan(q1);

  // tmp: deleted by max_inactivity (1 s without activity or subscription).
  await eventually(
    async () => {
      const list = await getJson(`${http}/streaming/channelsz`);
      return !(list.names as string[]).includes('tmp');
    },
    'tmp deleted by max_inactivity',
    8000,
  );
  // pub1, q2 and subber2 stay registered: the server stops under them.
  pub.cleanupOnClose();
  q2.cleanupOnClose();
  subber2.cleanupOnClose();
  pub.nc?.close();
  q2.nc?.close();
  subber2.nc?.close();
}

interface SubView {
  client_id: string;
  durable_name: string;
  queue_name: string;
  is_durable: boolean;
  is_offline: boolean;
  max_inflight: number;
  ack_wait: number;
  last_sent: number;
  pending_count: number;
}

interface ChannelView {
  name: string;
  msgs: number;
  bytes: number;
  first_seq: number;
  last_seq: number;
  subscriptions: SubView[];
}

export interface Observation {
  readonly clients: string[];
  readonly channels: ChannelView[];
  /** Every message of each channel: sequence, data (base64), timestamp (ms). */
  readonly messages: Record<string, [number, string, number][]>;
  /** What the durable `dur` gets when resumed: sequence and redelivered flag. */
  readonly resumed: [number, boolean][];
}

function pickSub(s: Record<string, unknown>): SubView {
  return {
    client_id: String(s.client_id),
    durable_name: typeof s.durable_name === 'string' ? s.durable_name : '',
    queue_name: typeof s.queue_name === 'string' ? s.queue_name : '',
    is_durable: s.is_durable === true,
    is_offline: s.is_offline === true,
    max_inflight: Number(s.max_inflight),
    ack_wait: Number(s.ack_wait),
    last_sent: Number(s.last_sent),
    pending_count: Number(s.pending_count),
  };
}

/** What a server started on a scenario directory shows (see the file comment). */
export async function observe(url: string, http: string): Promise<Observation> {
  const clientsz = await getJson(`${http}/streaming/clientsz`);
  const clients = ((clientsz.clients as { id: string }[] | null) ?? []).map((c) => c.id).sort();
  const channelsz = await getJson(`${http}/streaming/channelsz?subs=1`);
  const channels = ((channelsz.channels as Record<string, unknown>[] | null) ?? [])
    .map((c) => ({
      name: String(c.name),
      msgs: Number(c.msgs),
      bytes: Number(c.bytes),
      first_seq: Number(c.first_seq),
      last_seq: Number(c.last_seq),
      subscriptions: ((c.subscriptions as Record<string, unknown>[] | null) ?? [])
        .map(pickSub)
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));

  const reader = await connect(url, CLUSTER_ID, 'observer');
  const messages: Record<string, [number, string, number][]> = {};
  for (const ch of channels) {
    const r = await subscribe(
      reader,
      ch.name,
      reader.subscriptionOptions().setStartAtSequence(ch.first_seq),
    );
    await r.waitFor(ch.last_seq - ch.first_seq + 1);
    messages[ch.name] = r.msgs.map((m) => [
      m.getSequence(),
      m.getRawData().toString('base64'),
      m.getTimestamp().getTime(),
    ]);
    await unsubscribe(r.sub);
  }
  await closeStan(reader);

  const pending = channels
    .find((c) => c.name === 'foo')
    ?.subscriptions.find((s) => s.durable_name === 'dur')?.pending_count;
  const subber = await connect(url, CLUSTER_ID, 'subber');
  const resumedSub = await subscribe(
    subber,
    'foo',
    subber.subscriptionOptions().setDurableName('dur').setManualAckMode(true).setMaxInFlight(100),
  );
  await resumedSub.waitFor(pending ?? 0);
  await sleep(200);
  const resumed = resumedSub.msgs.map((m): [number, boolean] => [
    m.getSequence(),
    m.isRedelivered(),
  ]);
  await closeStan(subber);
  return { clients, channels, messages, resumed };
}

export async function expectedObservation(): Promise<Observation> {
  return JSON.parse(await readFile(`${FIXTURE_DIR}expected.json`, 'utf8')) as Observation;
}
