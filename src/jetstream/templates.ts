// Stream templates (deprecated in nats-server, still served by 2.9.10): a stream config
// with subjects and a max_streams; the first message on a subject the template covers
// creates the stream `<subject with . as _>` on that subject alone, owned by the
// template (`template_owner`). As the reference: the template keeps the names it made
// (a stream deleted by hand stays on its list, and counts against max_streams, until a
// creation fails), deleting it deletes those streams, and a template whose config says
// file storage is kept on disk (`<store_dir>/jetstream/<account>/templates/<name>/meta.inf`)
// and comes back at start-up.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Subscription } from '../server/subscription.js';
import type { JsAccount } from './account.js';
import { JsErr, type ApiError } from './errors.js';
import { JsonFields } from './json.js';
import {
  checkStreamConfig,
  decodeStreamConfig,
  JS_MAX_NAME_LEN,
  streamConfigJson,
  type StreamConfig,
} from './stream-config.js';
import { addStream, deleteStream, streamCreatedAdvisory } from './stream-manage.js';

const META = 'meta.inf';

export class StreamTemplate {
  /** The streams it made, in order. */
  streams: string[] = [];
  private subs: Subscription[] = [];
  private warned = false;

  constructor(
    private readonly jsa: JsAccount,
    readonly name: string,
    /** The checked stream config, named `_` as the reference names it. */
    readonly cfg: StreamConfig,
    readonly maxStreams: number,
  ) {}

  /** `{name, config, max_streams}` as the reference's StreamTemplateConfig. */
  configJson(): Record<string, unknown> {
    return { name: this.name, config: streamConfigJson(this.cfg), max_streams: this.maxStreams };
  }

  infoJson(): Record<string, unknown> {
    return { config: this.configJson(), streams: [...this.streams] };
  }

  subscribe(): void {
    const server = this.jsa.js.server;
    for (const subject of this.cfg.subjects) {
      this.subs.push(
        server.subscribeInternal(this.jsa.client, subject, null, (subj, reply, hdr, data) => {
          this.inbound(subj, reply, hdr, data);
        }),
      );
    }
  }

  unsubscribe(): void {
    for (const sub of this.subs) this.jsa.client.removeSubscription(sub);
    this.subs = [];
  }

  /** The reference's processInboundTemplateMsg: a first message makes its stream. */
  private inbound(subject: string, reply: string | null, hdr: Buffer | null, data: Buffer): void {
    const jsa = this.jsa;
    const name = subject.replaceAll('.', '_');
    if (jsa.streams.has(name)) return;
    if (this.streams.length >= this.maxStreams) {
      this.warnOnce(
        `could not create stream for account "${jsa.accountName}" on subject "${subject}", at limit`,
      );
      return;
    }
    this.streams.push(name);
    const made = addStream(jsa, {
      ...this.cfg,
      name,
      subjects: [subject],
      templateOwner: this.name,
    });
    if ('err_code' in made) {
      this.streams = this.streams.filter((s) => jsa.streams.has(s));
      this.warnOnce(
        `could not create stream for account "${jsa.accountName}" on subject "${subject}": ${made.description}`,
      );
      return;
    }
    streamCreatedAdvisory(jsa, made.stream.cfg);
    // The stream's own subscription came after this message was matched: hand it over.
    made.stream.processMsg(subject, reply, hdr, data);
  }

  private warnOnce(text: string): void {
    if (this.warned) return;
    this.warned = true;
    this.jsa.warn(text);
  }

  /** Where a file template lives; '' when it is kept in memory. */
  dir(): string {
    const base = this.jsa.js.accountDir(this.jsa.accountName);
    return base === '' || this.cfg.storage !== 'file' ? '' : join(base, 'templates', this.name);
  }
}

/** The reference's addStreamTemplate: checks, the subscriptions, the file. */
export function addTemplate(
  jsa: JsAccount,
  name: string,
  input: StreamConfig,
  maxStreams: number,
): StreamTemplate | ApiError {
  if (input.name !== '') return JsErr.streamTemplateCreate('template config name should be empty');
  if (name.length > JS_MAX_NAME_LEN)
    return JsErr.streamTemplateCreate(
      `template name is too long, maximum allowed is ${JS_MAX_NAME_LEN}`,
    );
  const cfg = checkStreamConfig({ ...input, name: '_' });
  if ('err_code' in cfg) return cfg;
  if (jsa.templates.has(name))
    return JsErr.streamTemplateCreate(`template with name ${JSON.stringify(name)} already exists`);
  const t = new StreamTemplate(jsa, name, cfg, maxStreams);
  jsa.templates.set(name, t);
  t.subscribe();
  const dir = t.dir();
  if (dir !== '') {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, META), JSON.stringify(t.configJson()));
  }
  return t;
}

/** The reference's streamTemplate.delete: its streams go with it. */
export async function deleteTemplate(jsa: JsAccount, t: StreamTemplate): Promise<void> {
  jsa.templates.delete(t.name);
  t.unsubscribe();
  const dir = t.dir();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
  for (const name of t.streams) {
    const s = jsa.streams.get(name);
    if (s !== undefined) await deleteStream(jsa, s);
  }
}

/** A template request body: `{name, config, max_streams}`; null when it is not that JSON. */
export function decodeTemplate(
  body: Buffer,
): { name: string; cfg: StreamConfig | null; maxStreams: number } | null {
  const f = JsonFields.parse(body);
  if (f === null) return null;
  const name = f.str('name');
  const inner = f.obj('config');
  const cfg = inner === null ? null : decodeStreamConfig(inner);
  const maxStreams = f.uint('max_streams');
  // uint32 in the reference's struct.
  if (!f.ok || (inner !== null && cfg === null) || maxStreams >= 2 ** 32) return null;
  return { name, cfg, maxStreams };
}

/**
 * File templates from the store (before the account's streams come back), then each
 * recovered stream's name on its owner's list, as the reference's recovery does.
 */
export function recoverTemplates(jsa: JsAccount): void {
  const base = jsa.js.accountDir(jsa.accountName);
  if (base === '') return;
  const root = join(base, 'templates');
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const dirName of names) {
    let read: ReturnType<typeof decodeTemplate> = null;
    try {
      read = decodeTemplate(readFileSync(join(root, dirName, META)));
    } catch {
      read = null;
    }
    const made =
      read === null || read.cfg === null
        ? null
        : addTemplate(jsa, read.name, { ...read.cfg, name: '' }, read.maxStreams);
    if (made === null || 'err_code' in made)
      jsa.warn(`could not recover stream template ${dirName}`);
  }
}

/** After the streams came back: each template's list of the streams it owns. */
export function attachTemplateStreams(jsa: JsAccount): void {
  for (const s of jsa.streams.values()) {
    const t = jsa.templates.get(s.cfg.templateOwner);
    if (t !== undefined && !t.streams.includes(s.name)) t.streams.push(s.name);
  }
}
