// Start-up recovery of an account's file streams: each stream's meta (its config and
// creation time, as the reference's meta.inf) and its consumers' (config, name,
// creation time), reopened through the file provider; consumers take their position
// from their stores. With only the memory provider there is nothing to recover.

import type { JsAccount } from './account.js';
import { decodeConsumerConfig } from './consumer-config.js';
import { addConsumer } from './consumer-manage.js';
import { JsonFields } from './json.js';
import { checkStreamConfig, decodeStreamConfig, storeConfigOf } from './stream-config.js';
import { Stream } from './stream.js';
import { nowNs } from './time.js';

export function recoverStreams(jsa: JsAccount): void {
  if (jsa.js.files === null) return;
  const provider = jsa.provider('file');
  for (const r of provider.recover()) {
    const f = JsonFields.parse(r.meta);
    const decoded = f === null ? null : decodeStreamConfig(f);
    const cfg = decoded === null ? null : checkStreamConfig(decoded);
    if (f === null || cfg === null || 'err_code' in cfg) {
      jsa.warn(`could not recover a stream from its metadata: ${r.meta.toString('utf8', 0, 200)}`);
      continue;
    }
    const created = f.time('created') ?? nowNs();
    let stream: Stream;
    try {
      stream = new Stream(jsa, cfg, provider.openStream(storeConfigOf(cfg), r.meta), created);
    } catch (err) {
      jsa.warn(`could not recover stream ${cfg.name}: ${String(err)}`);
      continue;
    }
    jsa.streams.set(cfg.name, stream);
    stream.start();
    for (const c of r.consumers) {
      const cf = JsonFields.parse(c.meta);
      const inner = cf?.obj('config') ?? null;
      const ccfg = inner === null ? null : decodeConsumerConfig(inner);
      if (cf === null || ccfg === null) {
        jsa.warn(`could not recover consumer ${c.name} of stream ${cfg.name}`);
        continue;
      }
      const made = addConsumer(jsa, stream, ccfg, {
        name: cf.str('name') || c.name,
        createdNs: cf.time('created') ?? nowNs(),
      });
      if ('err_code' in made) {
        jsa.warn(`could not recover consumer ${c.name} of stream ${cfg.name}: ${made.description}`);
      }
    }
  }
}
