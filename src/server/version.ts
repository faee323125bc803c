// wirebus's own version, and the reference server version whose protocol it speaks.
// INFO reports the latter because clients gate features on the server's semver.

export const WIREBUS_VERSION = '0.1.0';
export const PROTOCOL_VERSION = '2.9.10';
