// A subject transform as nats-server 2.9 builds one (newTransform) for a stream's
// republish: a source pattern and a destination whose tokens are literals or mapping
// functions of the source's `*` tokens ($1, {{wildcard(1)}}, {{partition(n,1,2)}},
// {{splitFromLeft(1,3)}}, {{splitFromRight}}, {{sliceFromLeft}}, {{sliceFromRight}},
// {{split(1,-)}}). Built once per config; match() runs per stored message.

import { isSubset } from './relations.js';

const enum Fn {
  Literal,
  Wildcard,
  Partition,
  SplitFromLeft,
  SplitFromRight,
  SliceFromLeft,
  SliceFromRight,
  Split,
}

interface DestToken {
  fn: Fn;
  text: string;
  /** Wildcard numbers (1-based) of the source the function reads. */
  wildcards: number[];
  int: number;
  str: string;
}

const FUNCTIONS: [RegExp, Fn][] = [
  [/\{\{\s*[wW]ildcard\s*\((.*)\)\s*\}\}/, Fn.Wildcard],
  [/\{\{\s*[pP]artition\s*\((.*)\)\s*\}\}/, Fn.Partition],
  [/\{\{\s*[sS]plit[fF]rom[lL]eft\s*\((.*)\)\s*\}\}/, Fn.SplitFromLeft],
  [/\{\{\s*[sS]plit[fF]rom[rR]ight\s*\((.*)\)\s*\}\}/, Fn.SplitFromRight],
  [/\{\{\s*[sS]lice[fF]rom[lL]eft\s*\((.*)\)\s*\}\}/, Fn.SliceFromLeft],
  [/\{\{\s*[sS]lice[fF]rom[rR]ight\s*\((.*)\)\s*\}\}/, Fn.SliceFromRight],
  [/\{\{\s*[sS]plit\s*\((.*)\)\s*\}\}/, Fn.Split],
];

/** Go's strconv.Atoi of a trimmed argument; null when it is not a decimal integer. */
function atoi(s: string): number | null {
  const t = s.replace(/^ +| +$/g, '');
  return /^[+-]?\d+$/.test(t) ? Number(t) : null;
}

/** One destination token read as the reference's indexPlaceHolders; null when invalid. */
function destToken(token: string): DestToken | null {
  const lit: DestToken = { fn: Fn.Literal, text: token, wildcards: [], int: -1, str: '' };
  if (token.length <= 1) return lit;
  if (token[0] === '$') {
    // $1, $2: the old form. Other tokens starting with $ stay literals.
    const n = /^[+-]?\d+$/.test(token.slice(1)) ? Number(token.slice(1)) : null;
    return n === null ? lit : { ...lit, fn: Fn.Wildcard, wildcards: [n] };
  }
  if (!(token.length > 4 && token.startsWith('{{') && token.endsWith('}}'))) return lit;
  for (const [re, fn] of FUNCTIONS) {
    const m = re.exec(token);
    if (m === null) continue;
    const args = m[1]!.split(/,\s*/);
    const ints = args.map(atoi);
    switch (fn) {
      case Fn.Wildcard:
        if (args.length !== 1 || ints[0] === null) return null;
        return { ...lit, fn, wildcards: [ints[0]!] };
      case Fn.Partition:
        if (args.length < 2 || ints.some((n) => n === null)) return null;
        return { ...lit, fn, int: ints[0]!, wildcards: ints.slice(1) as number[] };
      case Fn.Split:
        if (args.length !== 2 || ints[0] === null) return null;
        if (args[1]!.includes(' ') || args[1]!.includes('.')) return null;
        return { ...lit, fn, wildcards: [ints[0]!], str: args[1]! };
      default:
        if (args.length !== 2 || ints[0] === null || ints[1] === null) return null;
        return { ...lit, fn, wildcards: [ints[0]!], int: ints[1]! };
    }
  }
  return null;
}

/** Tokens of a subject the reference's subjectInfo accepts, with its wildcard counts. */
function subjectInfo(subject: string): { tokens: string[]; pwcs: number; fwc: boolean } | null {
  if (subject === '') return null;
  const tokens = subject.split('.');
  let pwcs = 0;
  let fwc = false;
  for (const t of tokens) {
    if (t.length === 0 || fwc) return null;
    if (t === '>') fwc = true;
    else if (t === '*') pwcs++;
  }
  return { tokens, pwcs, fwc };
}

/** FNV-1a, 32 bits: the reference's partition hash. */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  const b = Buffer.from(s, 'latin1');
  for (let i = 0; i < b.length; i++) {
    h ^= b[i]!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function split(out: string[], token: string, at: number): void {
  if (at > 0 && at < token.length) out.push(token.slice(0, at) + '.' + token.slice(at));
  else out.push(token);
}

export class SubjectTransform {
  private constructor(
    private readonly src: string,
    private readonly dest: string,
    private readonly srcTokens: number,
    /** Empty when the source has no wildcard: every match becomes `dest`. */
    private readonly tokens: DestToken[],
    /** Token positions in the source of its `*` wildcards, by their number (1-based). */
    private readonly positions: Map<number, number>,
  ) {}

  /** The transform, or null where the reference's newTransform fails. */
  static create(src: string, dest: string): SubjectTransform | null {
    const s = subjectInfo(src);
    const d = subjectInfo(dest);
    if (s === null || d === null || d.pwcs > 0 || s.fwc !== d.fwc) return null;
    const positions = new Map<number, number>();
    const tokens: DestToken[] = [];
    if (s.pwcs > 0 || s.fwc) {
      s.tokens.forEach((t, i) => {
        if (t === '*') positions.set(positions.size + 1, i);
      });
      let placeholders = 0;
      for (const t of d.tokens) {
        const dt = destToken(t);
        if (dt === null) return null;
        if (dt.fn !== Fn.Literal) {
          placeholders++;
          if (dt.wildcards.some((w) => w > s.pwcs)) return null;
        }
        tokens.push(dt);
      }
      if (placeholders < s.pwcs) return null;
    }
    return new SubjectTransform(src, dest, s.tokens.length, tokens, positions);
  }

  /** The destination of a literal subject, or '' when the source does not match it. */
  match(subject: string): string {
    if ((this.src === '>' || this.src === '') && (this.dest === '>' || this.dest === ''))
      return subject;
    if (this.src !== '>' && !isSubset(subject, this.src)) return '';
    if (this.tokens.length === 0) return this.dest;
    const st = subject.split('.');
    // The reference reads a wildcard number it has no position for as token 0.
    const at = (w: number): string => st[this.positions.get(w) ?? 0]!;
    const out: string[] = [];
    for (const t of this.tokens) {
      if (t.fn === Fn.Literal) {
        if (t.text === '>') break;
        out.push(t.text);
        continue;
      }
      const token = at(t.wildcards[0]!);
      switch (t.fn) {
        case Fn.Wildcard:
          out.push(token);
          break;
        case Fn.Partition:
          // The reference divides by the count as a uint32 (and crashes on 0: here it is 0).
          out.push(
            t.int >>> 0 === 0 ? '0' : String(fnv32a(t.wildcards.map(at).join('')) % (t.int >>> 0)),
          );
          break;
        case Fn.SplitFromLeft:
          split(out, token, t.int);
          break;
        case Fn.SplitFromRight:
          split(out, token, token.length - t.int);
          break;
        case Fn.SliceFromLeft:
          out.push(sliceLeft(token, t.int));
          break;
        case Fn.SliceFromRight:
          out.push(sliceRight(token, t.int));
          break;
        case Fn.Split:
          out.push(splitOn(token, t.str));
          break;
      }
    }
    if (this.tokens[this.tokens.length - 1]!.text === '>')
      out.push(st.slice(this.srcTokens - 1).join('.'));
    return out.join('.');
  }
}

function sliceLeft(token: string, size: number): string {
  if (!(size > 0 && size < token.length)) return token;
  const parts: string[] = [];
  for (let i = 0; i < token.length; i += size) parts.push(token.slice(i, i + size));
  return parts.join('.');
}

function sliceRight(token: string, size: number): string {
  if (!(size > 0 && size < token.length)) return token;
  const parts: string[] = [];
  const rem = token.length % size;
  if (rem > 0) parts.push(token.slice(0, rem));
  for (let i = rem; i < token.length; i += size) parts.push(token.slice(i, i + size));
  return parts.join('.');
}

/** The reference's split(): the pieces between separators, empty ones dropped. */
function splitOn(token: string, sep: string): string {
  const pieces = token.split(sep);
  let out = '';
  for (let j = 0; j < pieces.length; j++) {
    const p = pieces[j]!;
    out += p;
    // The reference's own rule for the dot after a piece (a leading empty piece gets none).
    if (j < pieces.length - 1 && pieces[j + 1] !== '' && !(j === 0 && p === '')) out += '.';
  }
  return out;
}
