// Lexer for the reference server's config language (nats-server 2.9.10, package
// `conf`, lex.go). It is a state machine in the same shape as the reference: each
// state reads one character and returns the next state, a stack holds the state to
// resume after a value or a comment. This file has the structure (top level, keys,
// includes, maps, arrays, comments); lex-scalars.ts the values, lex-core.ts the
// machinery. The rules are the reference's, quirks included, because an existing
// config file must mean the same thing to both servers; the quirks are marked
// "reference:" where they surprise.

import {
  BACKSLASH,
  COMMA,
  DOT,
  DQUOTE,
  EOF,
  HASH,
  LBRACE,
  LBRACKET,
  LPAREN,
  Lexer,
  MINUS,
  RBRACE,
  RBRACKET,
  SEMI,
  SLASH,
  SQUOTE,
  foldCase,
  isDigit,
  isKeySeparator,
  isNL,
  isSpace,
  isWhitespace,
  shown,
  unexpectedEofOrEnd,
  type Item,
  type State,
} from './lex-core.js';
import {
  lexBlock,
  lexDubQuotedString,
  lexNegNumberStart,
  lexNumberOrDateOrStringOrIPStart,
  lexQuotedString,
  lexString,
} from './lex-scalars.js';

export { foldCase, type Item, type ItemType } from './lex-core.js';

/**
 * Splits a config text into items. The list always ends with an 'eof' or an 'error'
 * item. Lexing never loops forever: every state consumes input or hands over to one
 * that does, and a step budget turns a broken promise into an error item.
 */
export function lex(input: string): Item[] {
  const lx = new Lexer(input);
  let state: State | null = lexTop;
  // Each character is visited by a handful of states at most.
  const budget = 16 * (input.length + 16);
  for (let steps = 0; state !== null; steps++) {
    if (steps > budget) {
      lx.errorf('BUG in lexer: no progress.');
      break;
    }
    state = state(lx);
  }
  return lx.items;
}

function lexTop(lx: Lexer): State | null {
  const r = lx.next();
  if (isSpace(r)) return lx.skip(lexTop);
  switch (r) {
    // reference: a top-level '{' is skipped, so a JSON object is a valid config.
    case LBRACE:
      return lx.skip(lexTop);
    case HASH:
      lx.push(lexTop);
      return lexCommentStart;
    case SLASH:
      if (lx.next() === SLASH) {
        lx.push(lexTop);
        return lexCommentStart;
      }
      lx.backup();
      // reference: a lone '/' at the start of a key ends lexing with an error.
      return unexpectedEofOrEnd(lx);
    case EOF:
      return unexpectedEofOrEnd(lx);
  }
  lx.backup();
  lx.push(lexTopValueEnd);
  return lexKeyStart;
}

function lexTopValueEnd(lx: Lexer): State | null {
  const r = lx.next();
  if (r === HASH) {
    lx.push(lexTop);
    return lexCommentStart;
  }
  if (r === SLASH) {
    if (lx.next() === SLASH) {
      lx.push(lexTop);
      return lexCommentStart;
    }
    lx.backup();
    return lexTopValueEnd; // reference: a lone '/' here counts as a blank
  }
  if (isWhitespace(r)) return lexTopValueEnd;
  if (isNL(r) || r === EOF || r === SEMI || r === COMMA || r === RBRACE) {
    lx.ignore();
    return lexTop;
  }
  return lx.errorf(
    `Expected a top-level value to end with a new line, comment or EOF, but got '${shown(r)}' instead.`,
  );
}

function lexKeyStart(lx: Lexer): State | null {
  const r = lx.peek();
  if (isKeySeparator(r)) return lx.errorf(`Unexpected key separator '${shown(r)}'`);
  if (isSpace(r)) {
    lx.next();
    return lx.skip(lexKeyStart);
  }
  lx.mark = lx.pos;
  if (r === DQUOTE || r === SQUOTE) {
    lx.next();
    return lx.skip(r === DQUOTE ? lexDubQuotedKey : lexQuotedKey);
  }
  lx.ignore();
  lx.next();
  return lexKey;
}

function quotedTopKey(lx: Lexer, quote: number, self: State): State | null {
  const r = lx.peek();
  if (r === quote) {
    lx.emit('key');
    lx.next();
    return lx.skip(lexKeyEnd);
  }
  if (r === EOF) return unexpectedEofOrEnd(lx);
  lx.next();
  return self;
}

function lexDubQuotedKey(lx: Lexer): State | null {
  return quotedTopKey(lx, DQUOTE, lexDubQuotedKey);
}

function lexQuotedKey(lx: Lexer): State | null {
  return quotedTopKey(lx, SQUOTE, lexQuotedKey);
}

/** A bare key followed by a blank may be the `include` keyword (in any case). */
function keyCheckKeyword(lx: Lexer, fallThrough: State, push: State | null): State | null {
  if (foldCase(lx.pending()) === 'include') {
    lx.ignore();
    if (push !== null) lx.push(push);
    return lexIncludeStart;
  }
  lx.emit('key');
  return fallThrough;
}

function lexIncludeStart(lx: Lexer): State | null {
  const r = lx.next();
  if (isWhitespace(r)) return lx.skip(lexIncludeStart);
  lx.backup();
  return lexInclude;
}

function lexInclude(lx: Lexer): State | null {
  const r = lx.next();
  if (r === SQUOTE || r === DQUOTE) {
    lx.ignore();
    return r === SQUOTE ? lexIncludeQuotedString : lexIncludeDubQuotedString;
  }
  if (r === LBRACKET) return lx.errorf('Expected include value but found start of an array');
  if (r === LBRACE) return lx.errorf('Expected include value but found start of a map');
  if (r === LPAREN) return lx.errorf('Expected include value but found start of a block');
  if (isDigit(r) || r === MINUS) {
    return lx.errorf('Expected include value but found start of a number');
  }
  if (r === BACKSLASH) return lx.errorf('Expected include value but found escape sequence');
  if (isNL(r)) return lx.errorf('Expected include value but found new line');
  lx.backup();
  return lexIncludeString;
}

function endQuotedInclude(lx: Lexer): State | null {
  lx.backup();
  lx.emit('include');
  lx.next();
  lx.ignore();
  return lx.pop();
}

function lexIncludeQuotedString(lx: Lexer): State | null {
  const r = lx.next();
  if (r === SQUOTE) return endQuotedInclude(lx);
  if (r === EOF) return lx.errorf('Unexpected EOF in quoted include');
  return lexIncludeQuotedString;
}

function lexIncludeDubQuotedString(lx: Lexer): State | null {
  const r = lx.next();
  if (r === DQUOTE) return endQuotedInclude(lx);
  if (r === EOF) return lx.errorf('Unexpected EOF in double quoted include');
  return lexIncludeDubQuotedString;
}

function lexIncludeString(lx: Lexer): State | null {
  const r = lx.next();
  if (isNL(r) || r === EOF || r === SEMI || r === RBRACE || isWhitespace(r)) {
    lx.backup();
    lx.emit('include');
    return lx.pop();
  }
  if (r === SQUOTE) return endQuotedInclude(lx);
  return lexIncludeString;
}

function lexKey(lx: Lexer): State | null {
  const r = lx.peek();
  if (isSpace(r)) return keyCheckKeyword(lx, lexKeyEnd, null);
  if (isKeySeparator(r) || r === EOF) {
    lx.emit('key');
    return lexKeyEnd;
  }
  lx.next();
  return lexKey;
}

function lexKeyEnd(lx: Lexer): State | null {
  const r = lx.next();
  // reference: blanks here include new lines, so a value may sit on the next line.
  if (isSpace(r)) return lx.skip(lexKeyEnd);
  if (isKeySeparator(r)) return lx.skip(lexValue);
  if (r === EOF) {
    // reference: a key with no value at the end of input is dropped, not an error.
    lx.emit('eof');
    return null;
  }
  lx.backup();
  return lexValue;
}

function lexValue(lx: Lexer): State | null {
  const r = lx.next();
  if (isWhitespace(r)) return lx.skip(lexValue);
  lx.mark = lx.pos - lx.width;
  switch (r) {
    case LBRACKET:
      lx.ignore();
      lx.emit('arrayStart');
      return lexArrayValue;
    case LBRACE:
      lx.ignore();
      lx.emit('mapStart');
      return lexMapKeyStart;
    case SQUOTE:
      lx.ignore();
      return lexQuotedString;
    case DQUOTE:
      lx.ignore();
      lx.stringState = lexDubQuotedString;
      return lexDubQuotedString;
    case MINUS:
      return lexNegNumberStart;
    case LPAREN:
      lx.ignore();
      return lexBlock;
    case DOT:
      return lx.errorf('Floats must start with a digit');
  }
  if (isDigit(r)) {
    lx.backup();
    return lexNumberOrDateOrStringOrIPStart;
  }
  if (isNL(r)) return lx.errorf('Expected value but found new line');
  lx.backup();
  lx.stringState = lexString;
  return lexString;
}

/** A '#' or '//' comment where `resume` continues after it, or null when it is none. */
function commentAt(lx: Lexer, r: number, resume: State): State | null {
  if (r === HASH) {
    lx.push(resume);
    return lexCommentStart;
  }
  if (r === SLASH) {
    if (lx.next() === SLASH) {
      lx.push(resume);
      return lexCommentStart;
    }
    lx.backup();
  }
  return null;
}

function lexArrayValue(lx: Lexer): State | null {
  const r = lx.next();
  if (isSpace(r)) return lx.skip(lexArrayValue);
  const comment = commentAt(lx, r, lexArrayValue);
  if (comment !== null) return comment;
  // reference: a lone '/' is reported as a stray ','.
  if (r === SLASH || r === COMMA) return lx.errorf("Unexpected array value terminator ','.");
  if (r === RBRACKET) return lexArrayEnd;
  lx.backup();
  lx.push(lexArrayValueEnd);
  return lexValue;
}

function lexArrayValueEnd(lx: Lexer): State | null {
  const r = lx.next();
  if (isWhitespace(r)) return lx.skip(lexArrayValueEnd);
  const comment = commentAt(lx, r, lexArrayValueEnd);
  if (comment !== null) return comment;
  // reference: a lone '/' separates values like ','.
  if (r === SLASH || r === COMMA || isNL(r)) return lx.skip(lexArrayValue);
  if (r === RBRACKET) return lexArrayEnd;
  return lx.errorf(
    `Expected an array value terminator "," or an array terminator "]", but got '${shown(r)}' instead.`,
  );
}

function lexArrayEnd(lx: Lexer): State | null {
  lx.ignore();
  lx.emit('arrayEnd');
  return lx.pop();
}

function lexMapKeyStart(lx: Lexer): State | null {
  const r = lx.peek();
  if (isKeySeparator(r)) return lx.errorf(`Unexpected key separator '${shown(r)}'.`);
  if (r === RBRACKET) return lx.errorf(`Unexpected array end '${shown(r)}' processing map.`);
  if (isSpace(r)) {
    lx.next();
    return lx.skip(lexMapKeyStart);
  }
  if (r === RBRACE) {
    lx.next();
    return lx.skip(lexMapEnd);
  }
  if (r === EOF) return lx.errorf('Unexpected EOF processing map.');
  lx.mark = lx.pos;
  if (r === DQUOTE || r === SQUOTE) {
    lx.next();
    return lx.skip(r === DQUOTE ? lexMapDubQuotedKey : lexMapQuotedKey);
  }
  if (r === HASH || r === SLASH) {
    lx.next();
    const comment = commentAt(lx, r, lexMapKeyStart);
    if (comment !== null) return comment;
    // reference: a lone '/' is dropped and the key starts after it.
  }
  lx.ignore();
  lx.next();
  return lexMapKey;
}

function quotedMapKey(lx: Lexer, quote: number, self: State, kind: string): State | null {
  const r = lx.peek();
  if (r === EOF) return lx.errorf(`Unexpected EOF processing ${kind} map key.`);
  if (r === quote) {
    lx.emit('key');
    lx.next();
    return lx.skip(lexMapKeyEnd);
  }
  lx.next();
  return self;
}

function lexMapQuotedKey(lx: Lexer): State | null {
  return quotedMapKey(lx, SQUOTE, lexMapQuotedKey, 'quoted');
}

function lexMapDubQuotedKey(lx: Lexer): State | null {
  return quotedMapKey(lx, DQUOTE, lexMapDubQuotedKey, 'double quoted');
}

function lexMapKey(lx: Lexer): State | null {
  const r = lx.peek();
  if (r === EOF) return lx.errorf('Unexpected EOF processing map key.');
  if (isSpace(r)) return keyCheckKeyword(lx, lexMapKeyEnd, lexMapValueEnd);
  if (isKeySeparator(r)) {
    lx.emit('key');
    return lexMapKeyEnd;
  }
  lx.next();
  return lexMapKey;
}

function lexMapKeyEnd(lx: Lexer): State | null {
  const r = lx.next();
  if (isSpace(r)) return lx.skip(lexMapKeyEnd);
  if (isKeySeparator(r)) return lx.skip(lexMapValue);
  lx.backup();
  return lexMapValue;
}

function lexMapValue(lx: Lexer): State | null {
  const r = lx.next();
  if (isSpace(r)) return lx.skip(lexMapValue);
  if (r === COMMA) return lx.errorf('Unexpected map value terminator ",".');
  if (r === RBRACE) return lx.skip(lexMapEnd);
  lx.backup();
  lx.push(lexMapValueEnd);
  return lexValue;
}

function lexMapValueEnd(lx: Lexer): State | null {
  const r = lx.next();
  if (isWhitespace(r)) return lx.skip(lexMapValueEnd);
  const comment = commentAt(lx, r, lexMapValueEnd);
  if (comment !== null) return comment;
  if (r === SLASH || r === SEMI || r === COMMA || isNL(r)) return lx.skip(lexMapKeyStart);
  if (r === RBRACE) return lx.skip(lexMapEnd);
  return lx.errorf(
    `Expected a map value terminator "," or a map terminator "}", but got '${shown(r)}' instead.`,
  );
}

function lexMapEnd(lx: Lexer): State | null {
  lx.ignore();
  lx.emit('mapEnd');
  return lx.pop();
}

function lexCommentStart(lx: Lexer): State | null {
  lx.ignore();
  return lexComment;
}

/** A comment runs to the end of the line; the parser never sees it. */
function lexComment(lx: Lexer): State | null {
  const r = lx.peek();
  if (isNL(r) || r === EOF) {
    lx.ignore();
    return lx.pop();
  }
  lx.next();
  return lexComment;
}
