// The machinery of the config lexer (see lexer.ts): character classes as the
// reference (nats-server 2.9.10, conf/lex.go) defines them with Go's unicode
// package, and the Lexer state that every state function reads and moves.
//
// Characters are read as code points. The reference reads UTF-8 and treats the NUL
// character exactly like the end of input in every check (while still moving past
// it), and so does this lexer.

export type ItemType =
  | 'error'
  | 'eof'
  | 'key'
  | 'string'
  | 'bool'
  | 'integer'
  | 'float'
  | 'datetime'
  | 'arrayStart'
  | 'arrayEnd'
  | 'mapStart'
  | 'mapEnd'
  | 'variable'
  | 'include';

export interface Item {
  readonly type: ItemType;
  /** Text of the item (for 'error', the message). */
  readonly val: string;
  /** Offset in the input where the item starts (for 'error', where lexing stopped). */
  readonly offset: number;
}

export type State = (lx: Lexer) => State | null;

export const EOF = 0;
export const TAB = 0x09;
export const NL = 0x0a;
export const CR = 0x0d;
export const SPACE = 0x20;
export const DQUOTE = 0x22;
export const HASH = 0x23;
export const DOLLAR = 0x24;
export const SQUOTE = 0x27;
export const LPAREN = 0x28;
export const RPAREN = 0x29;
export const COMMA = 0x2c;
export const MINUS = 0x2d;
export const DOT = 0x2e;
export const SLASH = 0x2f;
export const COLON = 0x3a;
export const SEMI = 0x3b;
export const EQUALS = 0x3d;
export const LBRACKET = 0x5b;
export const BACKSLASH = 0x5c;
export const RBRACKET = 0x5d;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;

/** Go's unicode.IsSpace (which, unlike JS `\s`, includes U+0085 and excludes U+FEFF). */
export function isSpace(r: number): boolean {
  if (r <= 0xff) return (r >= TAB && r <= CR) || r === SPACE || r === 0x85 || r === 0xa0;
  return (
    r === 0x1680 ||
    (r >= 0x2000 && r <= 0x200a) ||
    r === 0x2028 ||
    r === 0x2029 ||
    r === 0x202f ||
    r === 0x205f ||
    r === 0x3000
  );
}

/** Blanks allowed inside a line: the reference's isWhitespace. */
export function isWhitespace(r: number): boolean {
  return r === TAB || r === SPACE;
}

export function isNL(r: number): boolean {
  return r === NL || r === CR;
}

const unicodeDigit = /^\p{Nd}$/u;

/** Go's unicode.IsDigit: any decimal digit, not only ASCII ones. */
export function isDigit(r: number): boolean {
  if (r < 0x80) return r >= 0x30 && r <= 0x39;
  return unicodeDigit.test(String.fromCodePoint(r));
}

export function isKeySeparator(r: number): boolean {
  return r === EQUALS || r === COLON;
}

/** First letter of a size suffix: k, m, g, t, p, e in either case. */
export function isNumberSuffix(r: number): boolean {
  const lower = r | 0x20;
  return (
    lower === 0x6b ||
    lower === 0x6d ||
    lower === 0x67 ||
    lower === 0x74 ||
    lower === 0x70 ||
    lower === 0x65
  );
}

/** Letters that may follow a size suffix letter: b and i in either case (1KB, 1Ki, 1KiB). */
export function isSuffixTail(r: number): boolean {
  const lower = r | 0x20;
  return lower === 0x62 || lower === 0x69;
}

/** A character as the reference prints it in an error: only a newline is escaped. */
export function shown(r: number): string {
  return r === NL ? '\\n' : String.fromCodePoint(r);
}

/** Lower-case as Go's strings.ToLower does for the words the lexer looks for. */
export function foldCase(s: string): string {
  // JS maps U+0130 to "i" plus a combining dot; Go maps it to a plain "i".
  return s.replace(/\u0130/g, 'i').toLowerCase();
}

const BOOL_WORDS = new Set(['true', 'false', 'yes', 'no', 'on', 'off']);

export class Lexer {
  readonly input: string;
  /** Start of the pending item text. */
  start = 0;
  /** Next character to read. */
  pos = 0;
  /** Width of the last character read (0 at the end of input), for backup(). */
  width = 0;
  /** Where the item being lexed begins in the source (its quote or first character). */
  mark = 0;
  readonly items: Item[] = [];
  /** Pieces of a string with escapes: text, or a single byte from a \xHH escape. */
  parts: (string | number)[] = [];
  /** The string state to return to after an escape; set whenever a string starts. */
  stringState: State = (lx) => lx.errorf('BUG in lexer: no string state.');
  private readonly stack: State[] = [];

  constructor(input: string) {
    this.input = input;
  }

  next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos)!;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  /** Step back over the last character read; after the end of input this does nothing. */
  backup(): void {
    this.pos -= this.width;
  }

  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  ignore(): void {
    this.start = this.pos;
  }

  /** The reference's lexSkip: drop what was read and go on. */
  skip(next: State): State {
    this.ignore();
    return next;
  }

  push(state: State): void {
    this.stack.push(state);
  }

  pop(): State | null {
    const state = this.stack.pop();
    return state ?? this.errorf('BUG in lexer: no states to pop.');
  }

  pending(): string {
    return this.input.slice(this.start, this.pos);
  }

  emit(type: ItemType): void {
    const val = this.parts.length > 0 ? joinParts(this.parts) + this.pending() : this.pending();
    this.items.push({ type, val, offset: this.mark });
    this.start = this.pos;
  }

  emitString(): void {
    this.emit('string');
    this.parts = [];
  }

  addCurrentStringPart(offset: number): void {
    this.parts.push(this.input.slice(this.start, this.pos - offset));
    this.start = this.pos;
  }

  addStringPart(part: string | number): State {
    this.parts.push(part);
    this.start = this.pos;
    return this.stringState;
  }

  errorf(message: string): null {
    this.items.push({ type: 'error', val: message, offset: this.pos });
    return null;
  }

  isBool(): boolean {
    return BOOL_WORDS.has(foldCase(this.pending()));
  }

  /** A bare string starting with '$' is a variable reference; the '$' is dropped. */
  isVariable(): boolean {
    if (this.start < this.input.length && this.input.charCodeAt(this.start) === DOLLAR) {
      this.start += 1;
      return true;
    }
    return false;
  }

  /** Bytes of pending text in UTF-8: the reference counts bytes where this matters. */
  pendingBytes(): number {
    return Buffer.byteLength(this.pending(), 'utf8');
  }
}

/** Joins string pieces; raw bytes from \xHH escapes are decoded as UTF-8 with the text. */
function joinParts(parts: readonly (string | number)[]): string {
  if (parts.every((p) => typeof p === 'string')) return parts.join('');
  const chunks = parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.of(p)));
  return Buffer.concat(chunks).toString('utf8');
}

/** The end of input where an item may start: fine if nothing is pending. */
export function unexpectedEofOrEnd(lx: Lexer): State | null {
  if (lx.pos > lx.start) return lx.errorf('Unexpected EOF.');
  lx.emit('eof');
  return null;
}
