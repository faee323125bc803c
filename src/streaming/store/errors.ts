// Errors a store raises synchronously. Their messages are the reference server's texts:
// the streaming server sends `message` to clients as is (PubAck.error,
// SubscriptionResponse.error), e.g. "too many channels".

export type StoreErrorCode =
  | 'TOO_MANY_CHANNELS'
  | 'TOO_MANY_SUBS'
  | 'ALREADY_EXISTS'
  | 'NOT_FOUND'
  | 'NOT_SUPPORTED'
  | 'INVALID_SEQUENCE'
  | 'INVALID_LIMITS'
  | 'CLOSED'
  // A database-backed store whose database cannot take writes now (SQL).
  | 'UNAVAILABLE';

const TEXTS: Readonly<Record<StoreErrorCode, string>> = {
  TOO_MANY_CHANNELS: 'too many channels',
  TOO_MANY_SUBS: 'too many subscriptions per channel',
  ALREADY_EXISTS: 'already exists',
  NOT_FOUND: 'not found',
  NOT_SUPPORTED: 'not supported',
  INVALID_SEQUENCE: 'invalid sequence',
  INVALID_LIMITS: 'invalid limits',
  CLOSED: 'store is closed',
  UNAVAILABLE: 'store unavailable',
};

export class StoreError extends Error {
  override readonly name = 'StoreError';

  constructor(
    readonly code: StoreErrorCode,
    message: string = TEXTS[code],
  ) {
    super(message);
  }
}

export function isStoreError(err: unknown, code?: StoreErrorCode): err is StoreError {
  return err instanceof StoreError && (code === undefined || err.code === code);
}
