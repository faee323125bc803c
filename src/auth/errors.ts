// The security layer's configuration errors. Kept apart from security.ts so that
// the reload code can name them without importing the layer itself.

/** The config sections a security error can come from, by canonical name. */
export type SecuritySection =
  | 'authorization'
  | 'accounts'
  | 'no_auth_user'
  | 'operator'
  | 'resolver_preload'
  | 'trusted'
  | 'tls';

/** A configuration the security layer cannot run with. */
export class SecurityConfigError extends Error {
  /**
   * The section at fault, when known: a refused reload names its file:line, as the
   * reference's errors do.
   */
  readonly section: SecuritySection | null;

  constructor(message: string, section: SecuritySection | null = null) {
    super(message);
    this.section = section;
  }
}
