// Transcript assertions over a raw socket: send exact bytes, expect exact bytes and
// an open or closed connection. The expected bytes were recorded from nats-server
// 2.9.10 (../shared/spec/core-protocol.md §11), except where the contract table
// says wirebus differs; those tests carry "description" in their names.

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RawClient } from '../helpers/raw.js';

export { C0 } from '../helpers/raw.js';
export { sleep };

/** `CONNECT` with headers on, verbose and pedantic off. */
export const CH = 'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\n';
/** `CONNECT` with verbose on, pedantic off. */
export const CV = 'CONNECT {"verbose":true,"pedantic":false}\r\n';
/** `CONNECT` with verbose off, pedantic on. */
export const CP = 'CONNECT {"verbose":false,"pedantic":true}\r\n';

const REPLY_MS = 2000;

/**
 * Reads until exactly `expected.length` bytes arrived (or the socket closed, or time
 * ran out) and returns them, so that a short reply fails with a readable diff.
 */
export async function readReply(c: RawClient, expected: string, ms = REPLY_MS): Promise<string> {
  await c.waitFor((t) => t.length >= expected.length, ms);
  return c.take();
}

/**
 * Sends `bytes` (a list is written piece by piece, gapMs apart, so that the server
 * reads them separately), expects exactly `expected` back, and then checks that the
 * connection is still open and answers PING with PONG and nothing else: any stray
 * byte after the expected reply shows up there.
 */
export async function expectOpen(
  port: number,
  bytes: string | Buffer | (string | Buffer)[],
  expected: string,
  gapMs = 15,
): Promise<RawClient> {
  const c = await RawClient.open(port);
  try {
    await sendPieces(c, bytes, gapMs);
    assert.equal(await readReply(c, expected), expected);
    assert.equal(c.closed, false, 'the connection should stay open');
    c.send('PING\r\n');
    assert.equal(await readReply(c, 'PONG\r\n'), 'PONG\r\n', 'nothing more, then PONG');
    assert.equal(c.closed, false, 'the connection should stay open');
  } catch (err) {
    c.close();
    throw err;
  }
  return c;
}

/** Like expectOpen, and closes the client afterwards. */
export async function checkOpen(
  port: number,
  bytes: string | Buffer | (string | Buffer)[],
  expected: string,
  gapMs = 15,
): Promise<void> {
  const c = await expectOpen(port, bytes, expected, gapMs);
  c.close();
}

/** Sends `bytes`, expects the server to close the connection after exactly `expected`. */
export async function checkClosed(
  port: number,
  bytes: string | Buffer | (string | Buffer)[],
  expected: string,
): Promise<void> {
  const c = await RawClient.open(port);
  try {
    await sendPieces(c, bytes, 15);
    assert.equal(await c.waitClosed(REPLY_MS), true, 'the server should close the connection');
    assert.equal(c.take(), expected);
  } finally {
    c.close();
  }
}

async function sendPieces(
  c: RawClient,
  bytes: string | Buffer | (string | Buffer)[],
  gapMs: number,
): Promise<void> {
  if (!Array.isArray(bytes)) {
    c.send(bytes);
    return;
  }
  for (let i = 0; i < bytes.length; i++) {
    if (i > 0) await sleep(gapMs);
    c.send(bytes[i]!);
  }
}

/**
 * Splits server output into frames: a MSG or HMSG with its payload is one frame, any
 * other line is one frame. For comparing deliveries whose order is unspecified.
 */
export function frames(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const eol = text.indexOf('\r\n', i);
    if (eol < 0) {
      out.push(text.slice(i));
      break;
    }
    const line = text.slice(i, eol);
    let end = eol + 2;
    if (line.startsWith('MSG ') || line.startsWith('HMSG ')) {
      const size = Number(line.slice(line.lastIndexOf(' ') + 1));
      end += size + 2;
    }
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/** The frames of `text`, sorted, for a multiset comparison. */
export function sortedFrames(text: string): string[] {
  return frames(text).sort();
}
