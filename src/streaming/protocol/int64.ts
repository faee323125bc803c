// 64-bit values of the streaming protocol.
//
// On the wire every uint64/int64 protobuf field is a `Long` (the `long` package, which
// is what protobufjs reads and writes; it does not accept bigint). Inside the store and
// the server a channel sequence is a plain `number`: it is an array index and a map key
// on the hot path, and a safe integer covers it (2^53 - 1 messages is 285 years of one
// channel at a million messages a second). Timestamps are Unix nanoseconds, already
// past 2^53, so they stay `Long` everywhere.
import Long from 'long';
import { perf, TIME_ORIGIN } from '../../server/clock.js';

/** The highest sequence a store assigns: above it a `number` would lose precision. */
export const MAX_SEQUENCE = Number.MAX_SAFE_INTEGER;

/** A channel sequence as the uint64 `Long` a protobuf field takes. */
export function seqToLong(seq: number): Long {
  return Long.fromNumber(seq, true);
}

/**
 * A uint64 sequence from the wire (Ack.sequence, SubscriptionRequest.startSequence, ...)
 * as a store sequence. A value above MAX_SEQUENCE can name no stored message, so it
 * becomes Infinity: "after everything", which keeps comparisons right (a start sequence
 * past the last message means new messages only; an ack for it matches nothing).
 */
export function seqFromLong(value: Long): number {
  const high = value.high >>> 0;
  // high > 0x1fffff means value >= 2^53 when read unsigned, as uint64 fields are.
  if (high > 0x1fffff) return Infinity;
  return high * 0x1_0000_0000 + (value.low >>> 0);
}

const NANOS_PER_MILLI = 1_000_000;

/** Milliseconds (a duration or a Unix time) in nanoseconds, exactly. */
export function millisToNanos(ms: number): Long {
  return Long.fromNumber(ms).multiply(NANOS_PER_MILLI);
}

/** Nanoseconds in whole milliseconds, rounded towards minus infinity. */
export function nanosToMillis(ns: Long): number {
  const q = ns.div(NANOS_PER_MILLI);
  // Long division truncates towards zero; timestamps before 1970 round down instead.
  return ns.isNegative() && !q.multiply(NANOS_PER_MILLI).equals(ns)
    ? q.toNumber() - 1
    : q.toNumber();
}

/**
 * The current Unix time in nanoseconds, at microsecond resolution:
 * performance.timeOrigin + now() is a millisecond float precise to well under a
 * microsecond at today's dates, and whole microseconds (~1.7e15) fit a number exactly.
 * Called once per published message, so it builds the Long from its two 32-bit
 * halves (one allocation) instead of multiplying Longs.
 */
export function nowNanos(): Long {
  nowNanosInto(scratch);
  return Long.fromBits(scratch.low, scratch.high);
}

/** A 64-bit value as its unsigned 32-bit halves. */
export interface Halves {
  low: number;
  high: number;
}

/**
 * New halves, both zero. An unsigned half above 2^31 - 1 is not a small integer, so
 * the fields start as doubles (-0): fields that start as small integers change the
 * object's map at the first such timestamp, and every publish function compiled
 * before is deoptimized (bench/RESULTS.md, "A fresh server's first messages").
 */
export function newHalves(): Halves {
  return { low: -0, high: -0 };
}

const scratch = newHalves();

/** nowNanos() into `into`, as unsigned halves: no Long (the publish path). */
export function nowNanosInto(into: Halves): void {
  const micros = Math.floor((TIME_ORIGIN + perf.now()) * 1000);
  const microsHigh = Math.floor(micros / TWO_32);
  // Below 2^42 and 2^31: both products are exact doubles.
  const lowProduct = (micros - microsHigh * TWO_32) * 1000;
  const carry = Math.floor(lowProduct / TWO_32);
  into.low = lowProduct - carry * TWO_32;
  into.high = microsHigh * 1000 + carry;
}

const TWO_32 = 0x1_0000_0000;
