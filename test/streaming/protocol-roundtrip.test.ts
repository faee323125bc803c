// Every message of pb.proto and spb.proto survives encode -> decode with every field
// set, and the generated static code writes the same bytes as protobufjs' reflection
// encoder reading the .proto files directly (so the generated code matches the schema).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import protobuf from 'protobufjs';
import * as generated from '../../src/streaming/protocol/generated/index.js';
import { Long } from '../../src/streaming/protocol/index.js';
import { protoDir } from './paths.js';

interface Codec {
  encode(message: object): { finish(): Uint8Array };
  decode(bytes: Uint8Array): object;
}

function codecFor(name: string): Codec {
  const value: unknown = (generated as Record<string, unknown>)[name];
  assert.ok(
    typeof value === 'function' && 'encode' in value && 'decode' in value,
    `generated/index.ts exports no codec named ${name}`,
  );
  return value as unknown as Codec;
}

const root = new protobuf.Root().loadSync(
  [resolve(protoDir, 'pb.proto'), resolve(protoDir, 'spb.proto')],
  { keepCase: true },
);
const messageTypes = ['pb', 'spb']
  .flatMap((pkg) => {
    const ns = root.lookup(pkg);
    assert.ok(ns instanceof protobuf.Namespace);
    return ns.nestedArray;
  })
  .filter((t): t is protobuf.Type => t instanceof protobuf.Type);

// A value for `field` that is not its default, varied by `seed` so fields differ.
function sampleScalar(field: protobuf.Field, seed: number): unknown {
  switch (field.type) {
    case 'string':
      return `${field.name}-${seed}-é✓`;
    case 'bytes':
      return Uint8Array.from([seed & 0xff, 0, 0xff, 0x80]);
    case 'bool':
      return true;
    case 'int32':
      return -1000 - seed;
    case 'uint32':
      return 0xffff_fff0 + (seed % 8);
    case 'uint64':
      // Above 2^53, where a double would round.
      return Long.fromString('18446744073709551615', true).subtract(seed);
    case 'int64':
      return Long.fromString('-9223372036854775808').add(seed);
    default: {
      const resolved = field.resolvedType;
      if (resolved instanceof protobuf.Enum) {
        const values = Object.values(resolved.values);
        return values[values.length - 1];
      }
      if (resolved instanceof protobuf.Type) return sampleMessage(resolved, seed + 1);
      throw new Error(`no sample for ${field.type}`);
    }
  }
}

function sampleMessage(type: protobuf.Type, seed = 1): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let i = seed;
  for (const field of type.fieldsArray) {
    i++;
    out[field.name] = field.repeated
      ? [sampleScalar(field, i), sampleScalar(field, i + 1)]
      : sampleScalar(field, i);
  }
  return out;
}

// Compares decoded against sample, 64-bit values by their exact decimal text.
function assertSame(actual: unknown, expected: unknown, path: string): void {
  if (Long.isLong(expected)) {
    assert.ok(Long.isLong(actual), `${path}: expected a Long`);
    assert.equal(actual.toString(), expected.toString(), path);
    return;
  }
  if (expected instanceof Uint8Array) {
    assert.ok(actual instanceof Uint8Array, `${path}: expected bytes`);
    assert.deepEqual([...actual], [...expected], path);
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array`);
    assert.equal(actual.length, expected.length, `${path}.length`);
    expected.forEach((e, i) => {
      assertSame((actual as unknown[])[i], e, `${path}[${i}]`);
    });
    return;
  }
  if (typeof expected === 'object' && expected !== null) {
    for (const [k, v] of Object.entries(expected)) {
      assertSame((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    }
    return;
  }
  assert.equal(actual, expected, path);
}

describe('streaming protobuf messages', () => {
  it('covers every message of both .proto files', () => {
    // 13 client protocol messages (pb) and 17 server records (spb).
    assert.equal(messageTypes.length, 30);
  });

  for (const type of messageTypes) {
    it(`${type.fullName} round-trips every field`, () => {
      const codec = codecFor(type.name);
      const sample = sampleMessage(type);
      const bytes = codec.encode(sample).finish();
      assertSame(codec.decode(bytes), sample, type.name);
      const reference = type.encode(type.fromObject(sample)).finish();
      assert.deepEqual([...bytes], [...reference], 'same bytes as the reflection encoder');
    });

    it(`${type.fullName} with no field set is empty`, () => {
      const codec = codecFor(type.name);
      assert.equal(codec.encode({}).finish().length, 0);
      assert.ok(codec.decode(new Uint8Array(0)));
    });
  }

  it('skips unknown fields (a newer peer may add some)', () => {
    const withExtra = Uint8Array.from([
      ...generated.Ack.encode({ subject: 'foo' }).finish(),
      0xf8, // field 127, varint
      0x07,
      0x01,
    ]);
    assert.equal(generated.Ack.decode(withExtra).subject, 'foo');
  });

  it('rejects truncated input with an exception, which callers turn into "invalid request"', () => {
    const bytes = generated.PubMsg.encode({
      guid: 'abc',
      data: Uint8Array.from([1, 2, 3]),
    }).finish();
    assert.throws(() => generated.PubMsg.decode(bytes.subarray(0, bytes.length - 1)));
  });
});
