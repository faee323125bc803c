// The FILE store's record encoding (file-record.ts). Its CRC32, a slicing-by-8 loop
// for short inputs and zlib for long IEEE ones, must give what a bit-by-bit CRC
// gives, for every length around the 8-byte steps and the switch to zlib, at any
// offset, continued or not, with the default polynomial and with another
// (file_crc_poly). Its integer writers (fast paths below 2^31 and 2^32) must write
// what BigInt arithmetic says, up to 2^53.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import {
  CRC_IEEE,
  Crc32,
  getU64,
  putU64,
  putVarint,
} from '../../src/streaming/store/file-record.js';

/** CRC32 one bit at a time (reversed polynomial, as Go's crc32.MakeTable takes it). */
function bitwise(poly: number, b: Uint8Array, from: number, to: number, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = from; i < to; i++) {
    c ^= b[i]!;
    for (let k = 0; k < 8; k++) c = c & 1 ? (poly ^ (c >>> 1)) >>> 0 : c >>> 1;
  }
  return ~c >>> 0;
}

const bytes = Buffer.alloc(700);
for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 17) & 0xff;

describe('FILE store CRC32', () => {
  it('IEEE: every length from 0 to 600 at offsets 0 to 7, as zlib and bit by bit', () => {
    const crc = Crc32.of(CRC_IEEE);
    for (let from = 0; from < 8; from++) {
      for (let n = 0; n <= 600; n++) {
        const want = crc32(bytes.subarray(from, from + n));
        assert.equal(crc.bytes(bytes, from, from + n), want, `offset ${from}, ${n} bytes`);
        if (n % 37 === 0) assert.equal(bitwise(CRC_IEEE, bytes, from, from + n), want);
      }
    }
  });

  it('a CRC continued over a second range equals the CRC of both', () => {
    const crc = Crc32.of(CRC_IEEE);
    for (const [a, b] of [
      [3, 20],
      [100, 400],
      [7, 650],
    ] as const) {
      assert.equal(crc.bytes(bytes, a, b, crc.bytes(bytes, 0, a)), crc32(bytes.subarray(0, b)));
    }
  });

  it('another polynomial (Castagnoli) agrees with a bit-by-bit CRC at every length', () => {
    const poly = 0x82f63b78;
    const crc = Crc32.of(poly);
    for (let n = 0; n <= 300; n++) {
      assert.equal(crc.bytes(bytes, 5, 5 + n), bitwise(poly, bytes, 5, 5 + n), `${n} bytes`);
    }
    // The known check value of CRC-32C: "123456789" → 0xe3069283.
    assert.equal(crc.bytes(Buffer.from('123456789'), 0, 9), 0xe3069283);
  });
});

/** Protobuf varint of `v`, by BigInt. */
function varint(v: number): number[] {
  const out: number[] = [];
  let b = BigInt(v);
  while (b >= 0x80n) {
    out.push(Number(b & 0x7fn) | 0x80);
    b >>= 7n;
  }
  out.push(Number(b));
  return out;
}

describe('FILE store integer writers', () => {
  const values = [
    0,
    1,
    127,
    128,
    16_383,
    16_384,
    0x7fffffff,
    0x80000000,
    0xffffffff,
    0x1_0000_0000,
    0x1_0000_0005,
    123_456_789_012_345,
    2 ** 53 - 1,
  ];

  it('putU64 writes the little-endian uint64, getU64 reads it back', () => {
    for (const v of values) {
      const b = Buffer.alloc(12, 0xee);
      putU64(b, 2, v);
      assert.equal(b.readBigUInt64LE(2), BigInt(v), String(v));
      assert.equal(getU64(b, 2), v);
      assert.equal(b[0], 0xee);
      assert.equal(b[10], 0xee);
    }
  });

  it('putVarint writes the protobuf varint and returns its end', () => {
    for (const v of values) {
      const b = Buffer.alloc(16);
      const end = putVarint(b, 3, v);
      assert.deepEqual([...b.subarray(3, end)], varint(v), String(v));
    }
  });
});
