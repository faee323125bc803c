// What the embedding API says about the streaming layer without loading it: its
// version and the error that stops it from starting (the layer itself, protobuf code
// and stores, loads only when a server asks for streaming).

/** The reference version this server behaves as (serverz `version`). */
export const STREAMING_VERSION = '0.25.6';

/** Errors that stop the streaming server from starting (bad options, cluster ID clash). */
export class StreamingStartError extends Error {
  override readonly name = 'StreamingStartError';
}
