// Texts a store logs, as the reference prints them.

const PREFIXES = ['K', 'M', 'G', 'T', 'P', 'E'];

/** util.FriendlyBytes: "120 B", "976.56 MB". */
export function friendlyBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const exp = Math.floor(Math.log(bytes) / Math.log(1024));
  return `${(bytes / 1024 ** exp).toFixed(2)} ${PREFIXES[exp - 1] ?? '?'}B`;
}

/** Logged once per channel, the first time max_msgs or max_bytes drops a message. */
export function droppingMsgsWarning(
  channel: string,
  msgs: number,
  maxMsgs: number,
  bytes: number,
  maxBytes: number,
): string {
  return (
    `Reached limits for store ${JSON.stringify(channel)} (msgs=${msgs}/${maxMsgs} ` +
    `bytes=${friendlyBytes(bytes)}/${friendlyBytes(maxBytes)}), ` +
    'dropping old messages to make room for new ones'
  );
}
