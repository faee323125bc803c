// JetStream's settings: the reference's `jetstream {}` block and -js/-sd flags, and the
// per-account limits (`jetstream: enabled` or `{max_mem, max_file, max_streams,
// max_consumers}` in an account).

import { isValidSubject } from '../subjects/validate.js';

export interface JetStreamOptions {
  /** Where file streams live (`<storeDir>/jetstream/<account>/streams/...`); '' for memory only. */
  storeDir: string;
  /** Bytes; -1 for the default (75% of the machine's memory, as the reference). */
  maxMemoryStore: number;
  /** Bytes; -1 for the default (1 TB when the disk size is unknown). */
  maxFileStore: number;
  domain: string;
  /** Milliseconds between file syncs (the file store reads it). */
  syncInterval: number;
}

export interface JsAccountLimits {
  maxMemory: number;
  maxStore: number;
  maxStreams: number;
  maxConsumers: number;
  /** The most a consumer's max_ack_pending may be (and its default when lower than 1000). */
  maxAckPending: number;
  /** The most a memory or file stream's max_bytes may be. */
  memoryMaxStreamBytes: number;
  storeMaxStreamBytes: number;
  /** Streams must set max_bytes. */
  maxBytesRequired: boolean;
}

export const UNLIMITED_ACCOUNT: Readonly<JsAccountLimits> = {
  maxMemory: -1,
  maxStore: -1,
  maxStreams: -1,
  maxConsumers: -1,
  maxAckPending: -1,
  memoryMaxStreamBytes: -1,
  storeMaxStreamBytes: -1,
  maxBytesRequired: false,
};

export const defaultJetStreamOptions: Readonly<JetStreamOptions> = {
  storeDir: '',
  maxMemoryStore: -1,
  maxFileStore: -1,
  domain: '',
  syncInterval: 2 * 60 * 1000,
};

/** Why the reference refuses a domain name at start-up (validateJetStreamOptions), or null. */
export function domainProblem(domain: string): string | null {
  if (domain === '') return null;
  const subject = `$JS.${domain}.API.>`;
  if (!isValidSubject(subject, true))
    return `invalid domain name: derived ${JSON.stringify(subject)} is not a valid subject`;
  if (/[.*>]/.test(domain)) return 'invalid domain name: may not contain ., * or >';
  return null;
}
