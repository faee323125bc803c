// Replies the server sends often, encoded by hand: a PubAck per publish is on the
// hot path. The bytes are what protobufjs writes for the same message.

import { PubAck } from './protocol/index.js';
import { Slabs } from './protocol/slabs.js';
import { putBytes } from '../server/outbound.js';

/** PubAcks live until the bus has copied them out: one slab serves many. */
const ackSlabs = new Slabs();

/** PubAck{guid} without error: tag 0x0a, varint length, the guid's bytes. */
export function encodePubAck(guid: string): Buffer {
  const len = Buffer.byteLength(guid);
  if (len === 0) return Buffer.alloc(0);
  if (len > 127) return Buffer.from(PubAck.encode({ guid }).finish());
  const out = ackSlabs.alloc(2 + len);
  out[0] = 0x0a;
  out[1] = len;
  if (len === guid.length) out.write(guid, 2, len, 'latin1');
  else out.write(guid, 2, len, 'utf8');
  return out;
}

/** encodePubAck for the guid at buf[start, end) (a PubMsg's bytes), without a string. */
export function encodePubAckFrom(buf: Buffer, start: number, end: number): Buffer {
  const len = end - start;
  if (len === 0) return Buffer.alloc(0);
  if (len > 127) return encodePubAck(buf.toString('utf8', start, end));
  const out = ackSlabs.alloc(2 + len);
  out[0] = 0x0a;
  out[1] = len;
  putBytes(out, 2, buf, start, end);
  return out;
}

export function encodePubAckError(guid: string, error: string): Buffer {
  return Buffer.from(PubAck.encode({ guid, error }).finish());
}
