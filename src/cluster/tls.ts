// TLS on route connections, as the reference's `cluster { tls { ... } }`: unlike the
// client port there is nothing in clear, the handshake starts with the connection
// (createRoute runs doTLSHandshake before CONNECT and INFO). Both ends present the
// configured certificate and both check the other's against ca_file: the reference
// forces RequireAndVerifyClientCert on cluster TLS whatever `verify` says, and uses
// the CA as root and client CA alike. A dialling server checks the accepting one's
// certificate for the host it dialled.

import { isIP, type Socket } from 'node:net';
import type { PeerCertificate, SecureContext, Server, TLSSocket } from 'node:tls';
import { nodeTls, readTlsMaterial, TlsConfigError, type TlsOptions } from '../auth/tls.js';

/** `cluster { tls { cert_file, key_file, ca_file, verify, timeout } }`. */
export type RouteTlsOptions = Omit<TlsOptions, 'allowNonTls'>;

/** A handshake that did not complete, in the reference's words where it has them. */
export class RouteTlsError extends Error {
  /** The handshake ran out of time (logged as such, not as a handshake error). */
  readonly timeout: boolean;

  constructor(message: string, timeout = false) {
    super(message);
    this.timeout = timeout;
  }
}

export class RouteTls {
  readonly options: RouteTlsOptions;
  private readonly context: SecureContext;
  private readonly cert: Buffer;
  private readonly key: Buffer;
  private readonly ca: Buffer | undefined;
  /**
   * Runs the accepting side's handshakes; it never listens. A socket handed to it
   * comes back from a tls.Server, which has Node check the peer certificate.
   */
  private readonly handshakes: Server;
  private readonly pending = new Map<
    string,
    { done: (s: TLSSocket) => void; fail: (err: Error) => void }
  >();

  /** The same options and the same file contents. */
  sameAs(other: RouteTls): boolean {
    const same = (a: Buffer | undefined, b: Buffer | undefined): boolean =>
      a === undefined || b === undefined ? a === b : a.equals(b);
    return (
      this.options.timeout === other.options.timeout &&
      this.options.verify === other.options.verify &&
      same(this.cert, other.cert) &&
      same(this.key, other.key) &&
      same(this.ca, other.ca)
    );
  }

  /** Reads the files; throws TlsConfigError with the reference's texts. */
  constructor(options: RouteTlsOptions) {
    this.options = options;
    const files = readTlsMaterial(options);
    this.cert = files.cert;
    this.key = files.key;
    this.ca = files.ca;
    const material = { ...files, minVersion: 'TLSv1.2' as const };
    try {
      this.context = nodeTls().createSecureContext(material);
      this.handshakes = nodeTls().createServer({
        ...material,
        requestCert: true,
        // Checked in accept(), so that the reason reaches the log.
        rejectUnauthorized: false,
      });
    } catch (err) {
      throw new TlsConfigError(
        `error parsing X509 certificate/key pair: ${(err as Error).message}`,
      );
    }
    this.handshakes.on('secureConnection', (s: TLSSocket) => {
      const p = this.take(s);
      if (p === undefined) s.destroy();
      else p.done(s);
    });
    this.handshakes.on('tlsClientError', (err: Error, s: TLSSocket) => {
      this.take(s)?.fail(err);
    });
  }

  private take(
    s: TLSSocket,
  ): { done: (s: TLSSocket) => void; fail: (e: Error) => void } | undefined {
    const key = `${s.remoteAddress ?? ''}:${String(s.remotePort ?? '')}`;
    const p = this.pending.get(key);
    this.pending.delete(key);
    return p;
  }

  /** The accepting side's handshake on a route connection; the peer must present a certificate the CA vouches for. */
  accept(raw: Socket): Promise<TLSSocket> {
    return this.withTimeout(
      raw,
      new Promise<TLSSocket>((resolve, reject) => {
        const key = `${raw.remoteAddress ?? ''}:${String(raw.remotePort ?? '')}`;
        this.pending.set(key, {
          done: (s) => {
            if (s.authorized) {
              resolve(s);
              return;
            }
            s.destroy();
            reject(new RouteTlsError(peerError(s)));
          },
          fail: (err) => {
            reject(new RouteTlsError(tlsErrorText(err)));
          },
        });
        raw.once('close', () => {
          this.pending.delete(key);
          reject(new RouteTlsError('connection closed'));
        });
        this.handshakes.emit('connection', raw);
      }),
    );
  }

  /**
   * The dialling side's handshake: the other server's certificate must name the
   * host dialled (or, for an IP address, `tlsName`, the first host name among the
   * configured routes, as the reference's routeTLSName).
   */
  dial(raw: Socket, host: string, tlsName: string): Promise<TLSSocket> {
    const ip = isIP(host) !== 0;
    const name = ip && tlsName !== '' ? tlsName : host;
    return this.withTimeout(
      raw,
      new Promise<TLSSocket>((resolve, reject) => {
        const s = nodeTls().connect({
          socket: raw,
          secureContext: this.context,
          ...(isIP(name) === 0 ? { servername: name } : {}),
          rejectUnauthorized: true,
          checkServerIdentity: (_host: string, cert: PeerCertificate) =>
            nodeTls().checkServerIdentity(name, cert),
        });
        s.once('secureConnect', () => {
          resolve(s);
        });
        s.once('error', (err: Error) => {
          s.destroy();
          reject(new RouteTlsError(tlsErrorText(err)));
        });
      }),
    );
  }

  private withTimeout(raw: Socket, handshake: Promise<TLSSocket>): Promise<TLSSocket> {
    return new Promise<TLSSocket>((resolve, reject) => {
      const timer = setTimeout(() => {
        raw.destroy();
        reject(new RouteTlsError('TLS handshake timeout', true));
      }, this.options.timeout * 1000);
      timer.unref();
      handshake.then(
        (s) => {
          clearTimeout(timer);
          resolve(s);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
}

/** `1.3` and `TLS_AES_128_GCM_SHA256`, as the reference's debug line names them. */
export function describeSession(s: TLSSocket): string {
  const version = (s.getProtocol() ?? '?').replace(/^TLSv/, '');
  const cipher = s.getCipher();
  return `TLS version ${version}, cipher suite ${cipher.standardName || cipher.name}`;
}

/** Why the peer's certificate was not accepted, in Go's words. */
function peerError(s: TLSSocket): string {
  const code = String(s.authorizationError);
  // Node leaves the certificate out of a socket a tls.Server handed over; an
  // issuer that cannot be found at all is what a missing certificate looks like.
  const cert = s.getPeerCertificate() as PeerCertificate | null;
  const none =
    cert === null ? code === 'UNABLE_TO_GET_ISSUER_CERT' : Object.keys(cert).length === 0;
  if (none) return "tls: client didn't provide a certificate";
  return `tls: failed to verify client certificate: ${x509Text(code)}`;
}

function tlsErrorText(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (X509_CODES.has(code)) return x509Text(code);
  if (NOT_TLS.has(code)) return 'tls: first record does not look like a TLS handshake';
  return err.message.trim();
}

/** OpenSSL's ways of saying that the first bytes were not a TLS record (a plain route's CONNECT). */
const NOT_TLS = new Set([
  'ERR_SSL_HTTPS_PROXY_REQUEST',
  'ERR_SSL_HTTP_REQUEST',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'ERR_SSL_UNKNOWN_PROTOCOL',
]);

const UNKNOWN_AUTHORITY = 'x509: certificate signed by unknown authority';
const X509_CODES = new Map<string, string>([
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', UNKNOWN_AUTHORITY],
  ['UNABLE_TO_GET_ISSUER_CERT', UNKNOWN_AUTHORITY],
  ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', UNKNOWN_AUTHORITY],
  ['SELF_SIGNED_CERT_IN_CHAIN', UNKNOWN_AUTHORITY],
  ['DEPTH_ZERO_SELF_SIGNED_CERT', UNKNOWN_AUTHORITY],
  ['CERT_HAS_EXPIRED', 'x509: certificate has expired or is not yet valid'],
  ['CERT_NOT_YET_VALID', 'x509: certificate has expired or is not yet valid'],
]);

function x509Text(code: string): string {
  return X509_CODES.get(code) ?? code;
}
