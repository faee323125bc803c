// The streaming layer's public surface.
export { StreamingServer, StreamingStartError, STREAMING_VERSION } from './server.js';
export {
  type StreamingOptions,
  type StoreKind,
  defaultStreamingOptions,
  DEFAULT_CLUSTER_ID,
} from './options.js';
export { startStreaming } from './attach.js';
export type { Bus, BusHandler, BusSubscription } from './bus.js';
