// Replies the server sends that the hot path does not: a PubAck with an error. The
// PubAcks of successful publishes are written by hand, into their batch (pub-acks.ts).

import { PubAck } from './protocol/index.js';

export function encodePubAckError(guid: string, error: string): Buffer {
  return Buffer.from(PubAck.encode({ guid, error }).finish());
}
