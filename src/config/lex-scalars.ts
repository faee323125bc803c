// Scalar states of the config lexer (see lexer.ts): quoted, bare and block
// strings with their escapes, numbers with size suffixes, datetimes and IP
// addresses, as in the reference (nats-server 2.9.10, conf/lex.go). Each ends by
// emitting its item and returning to the state that the structure pushed.

import {
  BACKSLASH,
  COLON,
  COMMA,
  DOT,
  DQUOTE,
  EOF,
  Lexer,
  MINUS,
  NL,
  RBRACE,
  RBRACKET,
  RPAREN,
  SEMI,
  SQUOTE,
  isDigit,
  isNL,
  isNumberSuffix,
  isSuffixTail,
  isWhitespace,
  shown,
  unexpectedEofOrEnd,
  type State,
} from './lex-core.js';

export function lexQuotedString(lx: Lexer): State | null {
  const r = lx.next();
  if (r === SQUOTE) {
    lx.backup();
    lx.emit('string');
    lx.next();
    lx.ignore();
    return lx.pop();
  }
  // reference: an empty unterminated string at the very end ends the input quietly.
  if (r === EOF) return unexpectedEofOrEnd(lx);
  return lexQuotedString;
}

export function lexDubQuotedString(lx: Lexer): State | null {
  const r = lx.next();
  if (r === BACKSLASH) {
    lx.addCurrentStringPart(1);
    return lexStringEscape;
  }
  if (r === DQUOTE) {
    lx.backup();
    lx.emitString();
    lx.next();
    lx.ignore();
    return lx.pop();
  }
  if (r === EOF) return unexpectedEofOrEnd(lx);
  return lexDubQuotedString;
}

/** An unquoted string; it may turn out to be a boolean or a variable reference. */
export function lexString(lx: Lexer): State | null {
  const r = lx.next();
  if (r === BACKSLASH) {
    lx.addCurrentStringPart(1);
    return lexStringEscape;
  }
  if (
    isNL(r) ||
    r === EOF ||
    r === SEMI ||
    r === COMMA ||
    r === RBRACKET ||
    r === RBRACE ||
    isWhitespace(r)
  ) {
    lx.backup();
    if (lx.parts.length > 0) lx.emitString();
    else if (lx.isBool()) lx.emit('bool');
    else if (lx.isVariable()) lx.emit('variable');
    else lx.emitString();
    return lx.pop();
  }
  if (r === SQUOTE) {
    // reference: a quote ends a bare string and is dropped.
    lx.backup();
    lx.emitString();
    lx.next();
    lx.ignore();
    return lx.pop();
  }
  return lexString;
}

/** A block string: from '(' to a ')' alone on its line. */
export function lexBlock(lx: Lexer): State | null {
  const r = lx.next();
  if (r === RPAREN) {
    // Look at the character before the ')': it must be a new line.
    lx.backup();
    lx.backup();
    if (lx.next() !== NL) {
      lx.next();
      return lexBlock;
    }
    lx.next();
    // And the one after it must be a new line or the end.
    const after = lx.next();
    if (after === NL || after === EOF) {
      // reference: at the true end of input there is nothing to step back over, so
      // the closing ')' ends up in the value.
      lx.backup();
      lx.backup();
      lx.emit('string');
      lx.next();
      lx.ignore();
      return lx.pop();
    }
    lx.backup();
    return lexBlock;
  }
  if (r === EOF) return lx.errorf('Unexpected EOF processing block.');
  return lexBlock;
}

const ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x74, '\t'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [DQUOTE, '"'],
  [BACKSLASH, '\\'],
]);

export function lexStringEscape(lx: Lexer): State | null {
  const r = lx.next();
  if (r === 0x78) return lexStringBinary;
  const text = ESCAPES.get(r);
  if (text !== undefined) return lx.addStringPart(text);
  return lx.errorf(
    `Invalid escape character '${shown(r)}'. Only the following escape characters are allowed: ` +
      '\\xXX, \\t, \\n, \\r, \\", \\\\.',
  );
}

export function lexStringBinary(lx: Lexer): State | null {
  const endOfLine = "Expected two hexadecimal digits after '\\x', but hit end of line";
  if (isNL(lx.next())) return lx.errorf(endOfLine);
  if (isNL(lx.next())) return lx.errorf(endOfLine);
  // The reference looks at the last two bytes read, whatever characters they belong to.
  const tail = Buffer.from(lx.input.slice(Math.max(0, lx.pos - 4), lx.pos), 'utf8');
  const bytes = tail.subarray(Math.max(0, tail.length - 2));
  const hex = bytes.toString('latin1');
  if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
    const got = bytes.toString('utf8');
    return lx.errorf(`Expected two hexadecimal digits after '\\x', but got '${got}'`);
  }
  return lx.addStringPart(parseInt(hex, 16));
}

function digitExpected(lx: Lexer, r: number): null {
  if (r === DOT) return lx.errorf("Floats must start with a digit, not '.'.");
  return lx.errorf(`Expected a digit but got '${shown(r)}'.`);
}

export function lexNumberOrDateOrStringOrIPStart(lx: Lexer): State | null {
  const r = lx.next();
  if (!isDigit(r)) return digitExpected(lx, r);
  return lexNumberOrDateOrStringOrIP;
}

/** Ends an integer, a size-suffixed integer or a number-like bare string. */
function endsNumber(r: number): boolean {
  return (
    isNL(r) ||
    r === EOF ||
    r === RBRACE ||
    r === SEMI ||
    r === COMMA ||
    isWhitespace(r) ||
    isDigit(r)
  );
}

/** After a leading digit: an integer, a float, a date, an IP address or a bare string. */
export function lexNumberOrDateOrStringOrIP(lx: Lexer): State | null {
  const r = lx.next();
  if (r === MINUS) {
    // "YYYY-" so far, counted in bytes like the reference.
    if (lx.pendingBytes() !== 5) return lx.errorf('All ISO8601 dates must be in full Zulu form.');
    return lexDateAfterYear;
  }
  if (isDigit(r)) return lexNumberOrDateOrStringOrIP;
  if (r === DOT) return lexFloatStart;
  if (isNumberSuffix(r)) return lexConvenientNumber;
  // reference: ']' is not in this list, so in `[1, 2]` the 2 is a string.
  if (!endsNumber(r)) {
    lx.stringState = lexString;
    return lexString;
  }
  lx.backup();
  lx.emit('integer');
  return lx.pop();
}

/** After a size suffix letter (1k, 1M): more b/i letters, then the end of the value. */
export function lexConvenientNumber(lx: Lexer): State | null {
  const r = lx.next();
  if (isSuffixTail(r)) return lexConvenientNumber;
  lx.backup();
  if (endsNumber(r)) {
    lx.emit('integer');
    return lx.pop();
  }
  lx.stringState = lexString;
  return lexString;
}

/** The rest of a Zulu datetime after "YYYY-": 0 stands for any digit. */
const DATE_AFTER_YEAR = '00-00T00:00:00Z';

export function lexDateAfterYear(lx: Lexer): State | null {
  for (const f of DATE_AFTER_YEAR) {
    const r = lx.next();
    if (f === '0') {
      if (!isDigit(r)) {
        return lx.errorf(`Expected digit in ISO8601 datetime, but found '${shown(r)}' instead.`);
      }
    } else if (f.charCodeAt(0) !== r) {
      return lx.errorf(`Expected '${f}' in ISO8601 datetime, but found '${shown(r)}' instead.`);
    }
  }
  lx.emit('datetime');
  return lx.pop();
}

export function lexNegNumberStart(lx: Lexer): State | null {
  const r = lx.next();
  if (!isDigit(r)) return digitExpected(lx, r);
  return lexNegNumber;
}

export function lexNegNumber(lx: Lexer): State | null {
  const r = lx.next();
  if (isDigit(r)) return lexNegNumber;
  if (r === DOT) return lexFloatStart;
  if (isNumberSuffix(r)) return lexConvenientNumber;
  lx.backup();
  lx.emit('integer');
  return lx.pop();
}

export function lexFloatStart(lx: Lexer): State | null {
  const r = lx.next();
  if (!isDigit(r)) {
    return lx.errorf(`Floats must have a digit after the '.', but got '${shown(r)}' instead.`);
  }
  return lexFloat;
}

export function lexFloat(lx: Lexer): State | null {
  const r = lx.next();
  if (isDigit(r)) return lexFloat;
  // A second '.': not a float but an address such as 127.0.0.1:4222.
  if (r === DOT) return lexIPAddr;
  lx.backup();
  lx.emit('float');
  return lx.pop();
}

export function lexIPAddr(lx: Lexer): State | null {
  const r = lx.next();
  if (isDigit(r) || r === DOT || r === COLON || r === MINUS) return lexIPAddr;
  lx.backup();
  lx.emit('string');
  return lx.pop();
}
