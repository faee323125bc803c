// The tar archive inside a snapshot: nats-server's snapshots are a tar of the stream's
// directory. The writer makes POSIX ustar entries for regular files; the reader takes
// ustar and the PAX extended headers Go's archive/tar writes (the reference's names come
// in them), entries fed to it in pieces of any size.

const BLOCK = 512;
export const TAR_INVALID = 'archive/tar: invalid tar header';

function octal(h: Buffer, at: number, width: number, value: number): void {
  h.write(value.toString(8).padStart(width - 1, '0') + '\0', at, width, 'latin1');
}

/** A ustar header and the padded body of a regular file. */
export function tarEntry(name: string, body: Buffer, mtimeSec: number): Buffer[] {
  const h = Buffer.alloc(BLOCK);
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length > 100) throw new Error(`tar name too long: ${name}`);
  nameBytes.copy(h, 0);
  octal(h, 100, 8, 0o600);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, body.length);
  octal(h, 136, 12, Math.floor(mtimeSec));
  h.fill(0x20, 148, 156);
  h[156] = 0x30;
  h.write('ustar\x0000', 257, 8, 'latin1');
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += h[i]!;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
  const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
  return pad === 0 ? [h, body] : [h, body, Buffer.alloc(pad)];
}

/** The two zero blocks that end an archive. */
export function tarEnd(): Buffer {
  return Buffer.alloc(2 * BLOCK);
}

function field(h: Buffer, at: number, width: number): string {
  const end = h.indexOf(0, at);
  return h.toString('utf8', at, end < 0 || end > at + width ? at + width : end);
}

function readOctal(h: Buffer, at: number, width: number): number {
  const text = field(h, at, width).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new Error(TAR_INVALID);
  return parseInt(text, 8);
}

/** The `path` record of a PAX extended header ("<len> key=value\n" records). */
function paxPath(body: Buffer): string | null {
  let path: string | null = null;
  let p = 0;
  while (p < body.length) {
    const sp = body.indexOf(0x20, p);
    if (sp < 0) throw new Error(TAR_INVALID);
    const len = parseInt(body.toString('latin1', p, sp), 10);
    if (!(len > 0) || p + len > body.length) throw new Error(TAR_INVALID);
    const rec = body.toString('utf8', sp + 1, p + len - 1);
    const eq = rec.indexOf('=');
    if (eq > 0 && rec.substring(0, eq) === 'path') path = rec.substring(eq + 1);
    p += len;
  }
  return path;
}

export type TarEntryHandler = (name: string, body: Buffer) => void;

/** Reads an archive pushed in pieces; hands each regular file to `onEntry`. */
export class TarReader {
  private pending: Buffer = Buffer.alloc(0);
  /** The header of the entry whose body is awaited, its name, size and type. */
  private want: { name: string; size: number; type: number } | null = null;
  private paxName: string | null = null;
  /** The archive's end (a zero block) was read. */
  ended = false;

  constructor(
    private readonly onEntry: TarEntryHandler,
    /** What to say of an entry that is not a regular file (the reference's restore text). */
    private readonly unexpected: string,
  ) {}

  push(bytes: Buffer): void {
    if (this.ended) return;
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    let p = 0;
    const b = this.pending;
    for (;;) {
      if (this.want === null) {
        if (b.length - p < BLOCK) break;
        const h = b.subarray(p, p + BLOCK);
        p += BLOCK;
        if (h.every((x) => x === 0)) {
          this.ended = true;
          break;
        }
        this.want = this.header(h);
      }
      const w = this.want;
      const padded = w.size + ((BLOCK - (w.size % BLOCK)) % BLOCK);
      if (b.length - p < padded) break;
      const body = b.subarray(p, p + w.size);
      p += padded;
      this.want = null;
      if (w.type === 0x78) {
        this.paxName = paxPath(body);
      } else if (w.type === 0x67) {
        // A global PAX header: nothing a restore needs.
      } else if (w.type === 0x30 || w.type === 0) {
        const name = this.paxName ?? w.name;
        this.paxName = null;
        this.onEntry(name, Buffer.from(body));
      } else {
        throw new Error(this.unexpected);
      }
    }
    this.pending = p === b.length ? Buffer.alloc(0) : Buffer.from(b.subarray(p));
  }

  private header(h: Buffer): { name: string; size: number; type: number } {
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
    if (readOctal(h, 148, 8) !== sum) throw new Error(TAR_INVALID);
    const size = readOctal(h, 124, 12);
    let name = field(h, 0, 100);
    if (h.toString('latin1', 257, 262) === 'ustar') {
      const prefix = field(h, 345, 155);
      if (prefix !== '') name = prefix + '/' + name;
    }
    return { name, size, type: h[156]! };
  }
}
