// JetStream's settings: the reference's `jetstream {}` block and -js/-sd flags, and the
// per-account limits (`jetstream: enabled` or `{max_mem, max_file, max_streams,
// max_consumers}` in an account).

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
}

export const UNLIMITED_ACCOUNT: Readonly<JsAccountLimits> = {
  maxMemory: -1,
  maxStore: -1,
  maxStreams: -1,
  maxConsumers: -1,
};

export const defaultJetStreamOptions: Readonly<JetStreamOptions> = {
  storeDir: '',
  maxMemoryStore: -1,
  maxFileStore: -1,
  domain: '',
  syncInterval: 2 * 60 * 1000,
};
