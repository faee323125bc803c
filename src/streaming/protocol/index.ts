// The NATS Streaming protobuf messages (generated; see scripts/gen-proto.sh) and the
// helpers that convert their 64-bit fields and build the stored/delivered MsgProto.
export * from './generated/index.js';
export * from './int64.js';
export * from './msgproto.js';
export { default as Long } from 'long';
