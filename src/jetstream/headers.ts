// The NATS header block (`NATS/1.0\r\nKey: value\r\n...\r\n\r\n`) as JetStream reads
// and writes it: lookups without parsing the whole block, and the status messages a
// consumer sends (`NATS/1.0 404 No Messages`).

const CRLF = '\r\n';

/** The value of `key` (exact case, as the reference's getHeader) or '' when absent. */
export function headerValue(hdr: Buffer | null, key: string): string {
  if (hdr === null || hdr.length === 0) return '';
  return headerValueAt(hdr.toString('latin1'), headerNeedle(key));
}

/** What headerValueAt looks for: `\r\n<key>:`, made once for a key read on every publish. */
export function headerNeedle(key: string): string {
  return CRLF + key + ':';
}

/**
 * headerValue on a header block already made a (latin1) string, with the needle made
 * beforehand (headerNeedle): one conversion for many keys, no string built per call.
 */
export function headerValueAt(text: string, needle: string): string {
  const i = text.indexOf(needle);
  if (i < 0) return '';
  const start = i + needle.length;
  const end = text.indexOf(CRLF, start);
  return text.substring(start, end < 0 ? text.length : end).trim();
}

/** Whether `key` is present at all. */
export function hasHeader(hdr: Buffer | null, key: string): boolean {
  if (hdr === null || hdr.length === 0) return false;
  return hdr.toString('latin1').includes(CRLF + key + ':');
}

/** Removes `key` from a header block; the block itself when absent. */
export function removeHeader(hdr: Buffer, key: string): Buffer {
  const text = hdr.toString('latin1');
  const needle = CRLF + key + ':';
  const i = text.indexOf(needle);
  if (i < 0) return hdr;
  const end = text.indexOf(CRLF, i + needle.length);
  const out = text.substring(0, i) + text.substring(end);
  return Buffer.from(out, 'latin1');
}

/** Adds (or replaces) a header in a block; starts one when `hdr` is empty. */
export function setHeader(hdr: Buffer, key: string, value: string): Buffer {
  let base = hdr.length === 0 ? 'NATS/1.0\r\n\r\n' : removeHeader(hdr, key).toString('latin1');
  if (!base.endsWith('\r\n\r\n')) base += CRLF;
  return Buffer.from(base.substring(0, base.length - 2) + `${key}: ${value}\r\n\r\n`, 'latin1');
}

/**
 * What a headers_only consumer delivers of a message whose header block is
 * `buf[hdrStart, hdrEnd)` (empty for none) and whose data is `dataLen` bytes: that block
 * with `Nats-Msg-Size: <dataLen>` added, as the reference does; no data.
 */
export function headersOnly(
  buf: Buffer,
  hdrStart: number,
  hdrEnd: number,
  dataLen: number,
): Buffer {
  const base = hdrEnd === hdrStart ? 'NATS/1.0\r\n\r\n' : buf.toString('latin1', hdrStart, hdrEnd);
  return Buffer.from(
    base.substring(0, base.length - 2) + `Nats-Msg-Size: ${dataLen}\r\n\r\n`,
    'latin1',
  );
}

/** A status-only header block, e.g. `NATS/1.0 404 No Messages\r\n\r\n`, with extra headers. */
export function statusHeader(status: string, extra = ''): Buffer {
  // UTF-8, as Go writes its strings: a Go error text may quote a non-ASCII character.
  return Buffer.from(`NATS/1.0 ${status}\r\n${extra}\r\n`, 'utf8');
}
