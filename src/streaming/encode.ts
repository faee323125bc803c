// Replies the server sends often, encoded by hand: a PubAck per publish is on the
// hot path. The bytes are what protobufjs writes for the same message.

import { PubAck } from './protocol/index.js';

/** PubAck{guid} without error: tag 0x0a, varint length, the guid's bytes. */
export function encodePubAck(guid: string): Buffer {
  const len = Buffer.byteLength(guid);
  if (len === 0) return Buffer.alloc(0);
  if (len > 127) return Buffer.from(PubAck.encode({ guid }).finish());
  const out = Buffer.allocUnsafe(2 + len);
  out[0] = 0x0a;
  out[1] = len;
  out.write(guid, 2, len === guid.length ? 'latin1' : 'utf8');
  return out;
}

export function encodePubAckError(guid: string, error: string): Buffer {
  return Buffer.from(PubAck.encode({ guid, error }).finish());
}
