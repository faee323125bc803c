// Server ids in the reference's form: an NKEY-style public key (prefix byte, 32
// random bytes, CRC-16/XMODEM little-endian, base32 without padding), 56 chars
// starting with N.

import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const PREFIX_SERVER = 13 << 3;

export function crc16(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

export function base32(data: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of data) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET.charAt((value >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET.charAt((value << (5 - bits)) & 31);
  return out;
}

export function newServerId(): string {
  const raw = Buffer.alloc(35);
  raw[0] = PREFIX_SERVER;
  randomBytes(32).copy(raw, 1);
  const crc = crc16(raw.subarray(0, 33));
  raw[33] = crc & 0xff;
  raw[34] = crc >> 8;
  return base32(raw);
}

/** A random base64url string, as used for nonces. */
export function newNonce(): string {
  return randomBytes(11).toString('base64url');
}
