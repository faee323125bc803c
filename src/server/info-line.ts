// The INFO line a client gets at accept. Its first fields (server_id ... max_payload)
// are the same for every plain client, so their JSON is kept between connections
// and each connection appends only its own: building and stringifying the whole
// object per accept was the largest piece of JavaScript in a connection storm.

import { PROTOCOL_VERSION } from './version.js';

/** The fields every INFO starts with, in the reference's order (then TLS's, then max_payload). */
export function leadingInfoFields(
  id: string,
  name: string,
  host: string,
  port: number,
  headers: boolean,
  authRequired: boolean,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    server_id: id,
    server_name: name,
    version: PROTOCOL_VERSION,
    proto: 1,
    go: process.version,
    host,
    port,
    headers,
  };
  if (authRequired) fields.auth_required = true;
  return fields;
}

/** The shared fields of a plain client's INFO (no TLS), kept as JSON text. */
export class SharedInfo {
  /** The JSON of the last fields without its closing brace; '' before the first. */
  private text = '';
  private id = '';
  private name = '';
  private host = '';
  private port = -1;
  private headers = false;
  private authRequired = false;
  private maxPayload = -1;

  /** The fields' JSON without its closing brace, made again when any of them changed. */
  json(
    id: string,
    name: string,
    host: string,
    port: number,
    headers: boolean,
    authRequired: boolean,
    maxPayload: number,
  ): string {
    if (
      this.text === '' ||
      id !== this.id ||
      name !== this.name ||
      host !== this.host ||
      port !== this.port ||
      headers !== this.headers ||
      authRequired !== this.authRequired ||
      maxPayload !== this.maxPayload
    ) {
      const fields = leadingInfoFields(id, name, host, port, headers, authRequired);
      fields.max_payload = maxPayload;
      const json = JSON.stringify(fields);
      this.text = json.substring(0, json.length - 1);
      this.id = id;
      this.name = name;
      this.host = host;
      this.port = port;
      this.headers = headers;
      this.authRequired = authRequired;
      this.maxPayload = maxPayload;
    }
    return this.text;
  }
}
