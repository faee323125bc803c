// The INFO line a client gets at accept. Its first fields (server_id ... max_payload)
// are the same for every plain client, so their JSON is kept between connections
// and each connection appends only its own: building and stringifying the whole
// object per accept was the largest piece of JavaScript in a connection storm.

import { PROTOCOL_VERSION } from './version.js';

/** What the leading INFO fields are made of (the server fills one of these per INFO). */
export interface InfoInputs {
  id: string;
  name: string;
  host: string;
  port: number;
  headers: boolean;
  authRequired: boolean;
  maxPayload: number;
}

export function newInfoInputs(): InfoInputs {
  return {
    id: '',
    name: '',
    host: '',
    port: -1,
    headers: false,
    authRequired: false,
    maxPayload: -1,
  };
}

/**
 * The fields every INFO starts with, in the reference's order; TLS's fields, then
 * max_payload, come next.
 */
export function leadingInfoFields(i: InfoInputs): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    server_id: i.id,
    server_name: i.name,
    version: PROTOCOL_VERSION,
    proto: 1,
    go: process.version,
    host: i.host,
    port: i.port,
    headers: i.headers,
  };
  if (i.authRequired) fields.auth_required = true;
  return fields;
}

/** The shared fields of a plain client's INFO (no TLS), kept as JSON text. */
export class SharedInfo {
  /** The JSON of the kept fields without its closing brace; '' before the first. */
  private text = '';
  private readonly kept = newInfoInputs();

  /** The fields' JSON without its closing brace, made again when any of them changed. */
  json(i: InfoInputs): string {
    const k = this.kept;
    if (
      this.text === '' ||
      i.id !== k.id ||
      i.name !== k.name ||
      i.host !== k.host ||
      i.port !== k.port ||
      i.headers !== k.headers ||
      i.authRequired !== k.authRequired ||
      i.maxPayload !== k.maxPayload
    ) {
      const fields = leadingInfoFields(i);
      fields.max_payload = i.maxPayload;
      const json = JSON.stringify(fields);
      this.text = json.substring(0, json.length - 1);
      Object.assign(k, i);
    }
    return this.text;
  }
}
