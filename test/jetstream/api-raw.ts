// Requests whose answers are compared byte for byte: the reference's encoding/json
// writes `<`, `>` and `&` as \u003c, \u003e and \u0026 (a stream on `r.>` answers
// `"r.\u003e"`), also inside the API audit advisory's quoted response.

import { connect } from 'nats';

const S = '$JS.API.STREAM.';
const C = '$JS.API.CONSUMER.';

const RAW_STEPS: [string, unknown][] = [
  [S + 'CREATE.R', { name: 'R', subjects: ['r.>'], storage: 'memory', description: 'a<b>&c\b\f' }],
  [S + 'INFO.R', null],
  [
    C + 'DURABLE.CREATE.R.d',
    { stream_name: 'R', config: { durable_name: 'd', filter_subject: 'r.>' } },
  ],
  [S + 'LIST', null],
  [C + 'LIST.R', null],
  [S + 'CREATE.Z', { name: 'Z', subjects: ['r.>'] }],
];

/** Times and generated ids replaced: they differ from run to run. */
function scrub(text: string): string {
  return text
    .replace(/\\?"(created|timestamp|first_ts|last_ts)\\?":\\?"[^"\\]+\\?"/g, '"$1":"<time>"')
    .replace(/\\?"(id|server)\\?":\\?"[^"\\]+\\?"/g, '"$1":"<id>"')
    .replace(/,"client":\{[^}]*\}/, ',"client":{}');
}

/** Each step's answer, then the API audit advisory of the last step, as text. */
export async function runRawSteps(port: number): Promise<string[]> {
  const nc = await connect({ servers: `127.0.0.1:${port}` });
  const out: string[] = [];
  try {
    const audits: string[] = [];
    const sub = nc.subscribe('$JS.EVENT.ADVISORY.API', {
      callback: (_e, m) => audits.push(new TextDecoder().decode(m.data)),
    });
    for (const [subject, body] of RAW_STEPS) {
      const data = body === null ? '' : JSON.stringify(body);
      const m = await nc.request(subject, data, { timeout: 2000 });
      out.push(scrub(new TextDecoder().decode(m.data)));
    }
    await nc.flush();
    sub.unsubscribe();
    out.push(scrub(audits[0] ?? ''));
  } finally {
    await nc.close();
  }
  return out;
}
