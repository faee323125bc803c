// Every -ERR text the server sends and every reason it records when it closes a
// connection, in one place. The texts follow ../shared/spec/core-protocol.md: the
// description's wording where its table says so, the reference server's otherwise.

export const ErrText = {
  unknownOp: 'Unknown Protocol Operation',
  // description: capitalised; the reference sends lower case.
  maxControlLine: 'Maximum Control Line Exceeded',
  maxPayload: 'Maximum Payload Violation',
  authViolation: 'Authorization Violation',
  // description: 'Authorization Timeout'; the reference says 'Authentication Timeout'.
  authTimeout: 'Authorization Timeout',
  // description: capitalised; the reference sends lower case.
  invalidProtocol: 'Invalid Client Protocol',
  noRespondersNeedsHeaders: 'no responders requires headers support',
  staleConnection: 'Stale Connection',
  // description: capitalised; the reference sends lower case.
  maxConnections: 'Maximum Connections Exceeded',
  // description: sent before the close; the reference closes silently.
  slowConsumer: 'Slow Consumer',
  // description: sent for malformed arguments; the reference closes silently.
  parserError: 'Parser Error',
  tlsRequired: 'Secure Connection - TLS Required',
  routePort: 'Attempted To Connect To Route Port',
  // The reference's answer to a route RS+ whose subject the index refuses.
  invalidSubscription: 'Invalid Subscription',
  invalidSubject: 'Invalid Subject',
  invalidPublishSubject: 'Invalid Publish Subject',
  maxSubscriptions: 'maximum subscriptions exceeded',
  userExpired: 'User Authentication Expired',
  accountExpired: 'Account Authentication Expired',
} as const;

/** The close reasons /connz reports, with the reference server's exact strings. */
export const CloseReason = {
  clientClosed: 'Client Closed',
  authTimeout: 'Authentication Timeout',
  authFailure: 'Authentication Failure',
  authExpired: 'Authentication Expired',
  tlsHandshake: 'TLS Handshake Failure',
  slowConsumerPending: 'Slow Consumer (Pending Bytes)',
  slowConsumerDeadline: 'Slow Consumer (Write Deadline)',
  writeError: 'Write Error',
  readError: 'Read Error',
  parseError: 'Parse Error',
  staleConnection: 'Stale Connection',
  protocolViolation: 'Protocol Violation',
  badClientProtocol: 'Bad Client Protocol Version',
  maxConnections: 'Maximum Connections Exceeded',
  maxPayload: 'Maximum Message Payload Exceeded',
  maxControlLine: 'Maximum Control Line Exceeded',
  maxSubscriptions: 'Maximum Subscriptions Exceeded',
  serverShutdown: 'Server Shutdown',
  noRespondersNeedsHeaders: 'No Responders Requires Headers',
  duplicateRoute: 'Duplicate Route',
  routeRemoved: 'Route Removed',
  wrongPort: 'Incorrect Port',
  clusterNameConflict: 'Cluster Name Conflict',
  duplicateServerName: 'Duplicate Server Name',
} as const;

export type CloseReasonText = (typeof CloseReason)[keyof typeof CloseReason];

/** `-ERR '<text>'\r\n` as bytes. */
export function errLine(text: string): Buffer {
  return Buffer.from(`-ERR '${text}'\r\n`, 'latin1');
}

/**
 * Quotes a subject the way Go's %q does, because clients parse the permission
 * errors' quoted subjects. Subjects are held as latin1 strings of their UTF-8
 * bytes, so non-printable bytes become \x.. escapes and valid UTF-8 stays as is.
 */
export function goQuote(subject: string): string {
  const text = Buffer.from(subject, 'latin1').toString('utf8');
  let out = '"';
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0xfffd) out += '\\ufffd';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return Buffer.from(out + '"', 'utf8').toString('latin1');
}
