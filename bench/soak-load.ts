// The load of one soak run (soak.ts), against one server, in its own process:
//   - 4 core publishers, together CORE_RATE msgs/s of 256 B on soak.core.<n>, to a
//     plain subscriber and a queue group of two members (other connections);
//   - 100 requests a second to a responder (1 s timeout);
//   - 20 connections opened a second, each closed a second later;
//   - one streaming client publishing 500 msgs/s of 256 B over three channels (each
//     publish acked), and on each channel a durable with manual acks and a durable
//     queue group of two members, on a second streaming client.
// On SIGTERM it stops publishing, lets the subscribers drain, and prints one JSON
// line: what was sent, received, lost, timed out.
//
//   node dist/bench/soak-load.js PORT [--core-rate 2500] [--stan-rate 500]

import { connect as natsConnect, type NatsConnection } from 'nats';
import { connect as stanConnect, type Stan, type StanMessage } from '../test/streaming/stan.js';

const port = Number(process.argv[2]);
const coreRate = Number(argValue('--core-rate') ?? '2500');
const stanRate = Number(argValue('--stan-rate') ?? '500');
const url = `nats://127.0.0.1:${port}`;
const TICK_MS = 10;
const CHANNELS = ['soak.ch.0', 'soak.ch.1', 'soak.ch.2'];

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const stats = {
  core_published: 0,
  core_plain_received: 0,
  core_queue_received: 0,
  requests: 0,
  request_timeouts: 0,
  request_max_ms: 0,
  conns_opened: 0,
  conns_failed: 0,
  stan_published: 0,
  stan_acked: 0,
  stan_pub_errors: 0,
  stan_durable_received: 0,
  stan_queue_received: 0,
  stan_redelivered: 0,
};
const payload = Buffer.alloc(256, 0x61);
const timers: NodeJS.Timeout[] = [];
/** Sequences seen per channel by the durable, and by the queue group. */
const durableSeen = CHANNELS.map(() => new Set<number>());
const queueSeen = CHANNELS.map(() => new Set<number>());
/** Publishes acked per channel. */
const ackedPerChannel = CHANNELS.map(() => 0);

/** Calls `fn(n)` every tick with how many of `perSecond` are due, spread evenly. */
function paced(perSecond: number, fn: (n: number) => void): void {
  let owed = 0;
  timers.push(
    setInterval(() => {
      owed += (perSecond * TICK_MS) / 1000;
      const n = Math.floor(owed);
      owed -= n;
      if (n > 0) fn(n);
    }, TICK_MS),
  );
}

async function core(): Promise<NatsConnection[]> {
  const conns: NatsConnection[] = [];
  const plain = await natsConnect({ servers: url, name: 'soak-plain' });
  plain.subscribe('soak.core.*', {
    callback: () => {
      stats.core_plain_received++;
    },
  });
  const queue = await natsConnect({ servers: url, name: 'soak-queue' });
  for (let i = 0; i < 2; i++) {
    queue.subscribe('soak.core.*', {
      queue: 'q',
      callback: () => {
        stats.core_queue_received++;
      },
    });
  }
  const responder = await natsConnect({ servers: url, name: 'soak-responder' });
  responder.subscribe('soak.req', {
    callback: (_err, m) => {
      m.respond(payload.subarray(0, 16));
    },
  });
  await Promise.all([plain.flush(), queue.flush(), responder.flush()]);
  conns.push(plain, queue, responder);
  for (let p = 0; p < 4; p++) {
    const nc = await natsConnect({ servers: url, name: `soak-pub-${p}` });
    conns.push(nc);
    paced(coreRate / 4, (n) => {
      for (let i = 0; i < n; i++) nc.publish(`soak.core.${p}`, payload);
      stats.core_published += n;
    });
  }
  const requester = await natsConnect({ servers: url, name: 'soak-requester' });
  conns.push(requester);
  paced(100, (n) => {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      stats.requests++;
      requester.request('soak.req', payload.subarray(0, 16), { timeout: 1000 }).then(
        () => {
          const ms = performance.now() - t0;
          if (ms > stats.request_max_ms) stats.request_max_ms = Math.round(ms * 10) / 10;
        },
        () => {
          stats.request_timeouts++;
        },
      );
    }
  });
  paced(20, (n) => {
    for (let i = 0; i < n; i++) {
      natsConnect({ servers: url, name: 'soak-churn' }).then(
        (nc) => {
          stats.conns_opened++;
          setTimeout(() => {
            void nc.close();
          }, 1000);
        },
        () => {
          stats.conns_failed++;
        },
      );
    }
  });
  return conns;
}

async function streaming(): Promise<Stan[]> {
  const subClient = await stanConnect(url, 'test-cluster', 'soak-sub', { connectTimeout: 10000 });
  const ready: Promise<void>[] = [];
  CHANNELS.forEach((ch, c) => {
    const opts = (): ReturnType<Stan['subscriptionOptions']> =>
      subClient
        .subscriptionOptions()
        .setDeliverAllAvailable()
        .setManualAckMode(true)
        .setDurableName('dur');
    const onMsg =
      (seen: Set<number>, counter: 'stan_durable_received' | 'stan_queue_received') =>
      (m: StanMessage) => {
        if (m.isRedelivered()) stats.stan_redelivered++;
        const seq = m.getSequence();
        if (!seen.has(seq)) {
          seen.add(seq);
          stats[counter]++;
        }
        m.ack();
      };
    const durable = subClient.subscribe(ch, opts());
    durable.on('message', onMsg(durableSeen[c]!, 'stan_durable_received'));
    ready.push(new Promise((resolve) => durable.once('ready', resolve)));
    for (let i = 0; i < 2; i++) {
      const member = subClient.subscribe(ch, 'dq', opts());
      member.on('message', onMsg(queueSeen[c]!, 'stan_queue_received'));
      ready.push(new Promise((resolve) => member.once('ready', resolve)));
    }
  });
  await Promise.all(ready);
  const pubClient = await stanConnect(url, 'test-cluster', 'soak-pub', { connectTimeout: 10000 });
  let next = 0;
  paced(stanRate, (n) => {
    for (let i = 0; i < n; i++) {
      const c = next++ % CHANNELS.length;
      stats.stan_published++;
      pubClient.publish(CHANNELS[c]!, payload, (err) => {
        if (err) stats.stan_pub_errors++;
        else {
          stats.stan_acked++;
          ackedPerChannel[c]!++;
        }
      });
    }
  });
  return [subClient, pubClient];
}

async function main(): Promise<void> {
  const conns = await core();
  const stans = await streaming();
  process.stderr.write('soak-load: running\n');
  await new Promise<void>((resolve) => process.once('SIGTERM', resolve));
  for (const t of timers) clearInterval(t);
  // Let what is in flight arrive: publish acks, deliveries, replies.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const lostStan = CHANNELS.map(
    (_ch, c) =>
      ackedPerChannel[c]! - durableSeen[c]!.size + (ackedPerChannel[c]! - queueSeen[c]!.size),
  ).reduce((a, b) => a + b, 0);
  const out = {
    ...stats,
    core_lost:
      stats.core_published -
      stats.core_plain_received +
      (stats.core_published - stats.core_queue_received),
    stan_lost: lostStan,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  for (const sc of stans) sc.close();
  await Promise.all(conns.map((nc) => nc.close()));
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`soak-load: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
