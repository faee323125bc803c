// TLS on the client port, as the reference does it: INFO goes out in clear (with
// tls_required), then the client's first byte decides. 0x16 starts a TLS handshake
// on the same socket; anything else gets -ERR 'Secure Connection - TLS Required' in
// clear and a close (the description's behaviour; the reference just waits for its
// handshake timeout). With allow_non_tls, a plain client may go on in clear.

import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Server, TLSSocket } from 'node:tls';
import { CloseReason, ErrText } from '../protocol/errors.js';
import type { Client } from '../server/client.js';
import { onFirstUse, requireModule } from './lazy-module.js';

/** node:tls, loaded when a TLS layer is first built. */
export const nodeTls = onFirstUse(() => requireModule('node:tls') as typeof import('node:tls'));

export interface TlsOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** CA bundle for client certificates; empty for the system's. */
  readonly caFile: string;
  /** Require a client certificate that the CA vouches for. */
  readonly verify: boolean;
  /** Seconds a client has to complete its TLS handshake (the reference's tls timeout, 2 s). */
  readonly timeout: number;
  /** Accept plain clients too; INFO then says tls_available instead of tls_required. */
  readonly allowNonTls: boolean;
}

export const DEFAULT_TLS_TIMEOUT = 2;

const HANDSHAKE = 0x16;

/** A TLS setting that cannot be used; the message names the file or field. */
export class TlsConfigError extends Error {}

/** The PEM files of a tls block, read; a missing or unreadable one is a TlsConfigError in the reference's words. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

export function readTlsMaterial(options: {
  certFile: string;
  keyFile: string;
  caFile: string;
}): TlsMaterial {
  if (options.certFile === '') throw new TlsConfigError("missing 'cert_file' in TLS configuration");
  if (options.keyFile === '') throw new TlsConfigError("missing 'key_file' in TLS configuration");
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new TlsConfigError(`error loading ${what} ${file}: ${(err as Error).message}`);
    }
  };
  const material: TlsMaterial = {
    cert: read(options.certFile, 'certificate'),
    key: read(options.keyFile, 'key'),
  };
  if (options.caFile !== '') material.ca = read(options.caFile, 'CA file');
  return material;
}

export class TlsLayer {
  readonly options: TlsOptions;
  /**
   * Runs every handshake; it never listens. Sockets are handed to it after their
   * first byte, so that Node checks the client certificate as for the sockets a
   * tls.Server accepts (a TLSSocket made by hand leaves that to its owner). The
   * TLSSocket it makes replays what the stream holds, so the byte already read
   * reaches the TLS engine.
   */
  private readonly handshakes: Server;
  /** Handshakes under way, by the client's address and port. */
  private readonly pending = new Map<
    string,
    { done: (s: TLSSocket) => void; fail: (err: Error) => void }
  >();

  constructor(options: TlsOptions) {
    this.options = options;
    const material = readTlsMaterial(options);
    try {
      this.handshakes = nodeTls().createServer({
        ...material,
        minVersion: 'TLSv1.2',
        requestCert: options.verify,
        rejectUnauthorized: options.verify,
        handshakeTimeout: options.timeout * 1000,
      });
    } catch (err) {
      throw new TlsConfigError(
        `error parsing X509 certificate/key pair: ${(err as Error).message}`,
      );
    }
    const peer = (s: TLSSocket): string => `${s.remoteAddress ?? ''}:${String(s.remotePort ?? '')}`;
    this.handshakes.on('secureConnection', (s: TLSSocket) => {
      const p = this.pending.get(peer(s));
      this.pending.delete(peer(s));
      if (p === undefined) s.destroy();
      else p.done(s);
    });
    this.handshakes.on('tlsClientError', (err: Error, s: TLSSocket) => {
      const p = this.pending.get(peer(s));
      this.pending.delete(peer(s));
      p?.fail(err);
    });
  }

  /** INFO fields, as the reference: tls_required (or tls_available with allow_non_tls), tls_verify. */
  info(info: Record<string, unknown>): void {
    if (this.options.allowNonTls) info.tls_available = true;
    else info.tls_required = true;
    if (this.options.verify) info.tls_verify = true;
  }

  /**
   * Sends INFO in clear, then reads the first byte: a handshake upgrades the socket
   * and `ready` gets the TLS socket; otherwise the client is refused (or, with
   * allow_non_tls, `ready` gets the plain socket).
   */
  begin(c: Client, raw: Socket, info: Buffer, ready: (socket: Socket) => void): void {
    const timeoutMs = this.options.timeout * 1000;
    const onError = (): void => {
      c.close(CloseReason.readError);
    };
    raw.on('error', onError);
    raw.on('close', onError);
    let timer: NodeJS.Timeout | null = setTimeout(() => {
      timer = null;
      c.server.logger.error(`${c.label()} - TLS handshake timeout`);
      c.close(CloseReason.tlsHandshake, ErrText.tlsRequired);
    }, timeoutMs);
    timer.unref();
    const stopTimer = (): void => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    };
    raw.write(info);
    raw.once('data', (first: Buffer) => {
      raw.pause();
      raw.unshift(first);
      if (c.closed) return;
      if (first[0] !== HANDSHAKE) {
        if (this.options.allowNonTls) {
          stopTimer();
          raw.off('error', onError);
          raw.off('close', onError);
          ready(raw);
          raw.resume();
          return;
        }
        stopTimer();
        c.server.logger.error(`${c.label()} - Client did not start a TLS handshake`);
        c.close(CloseReason.tlsHandshake, ErrText.tlsRequired);
        return;
      }
      const fail = (err: Error): void => {
        stopTimer();
        c.server.logger.error(`${c.label()} - TLS handshake error: ${err.message}`);
        c.close(CloseReason.tlsHandshake);
        raw.destroy();
      };
      const key = `${raw.remoteAddress ?? ''}:${String(raw.remotePort ?? '')}`;
      this.pending.set(key, {
        done: (secure) => {
          stopTimer();
          raw.off('error', onError);
          raw.off('close', onError);
          if (c.closed) {
            secure.destroy();
            return;
          }
          // Client.close() writes to and ends c.socket: from now on the TLS socket.
          c.socket = secure;
          if (c.server.logger.debugEnabled) {
            c.server.logger.debug(
              `${c.label()} - TLS handshake complete (${secure.getProtocol() ?? '?'}, ${secure.getCipher().name})`,
            );
          }
          ready(secure);
        },
        fail,
      });
      // Unclaimed entries (a refused certificate ends silently) go with the client.
      c.socket?.once('close', () => this.pending.delete(key));
      this.handshakes.emit('connection', raw);
    });
  }
}
