// A channel's directory, DIR/<name>, created as the reference creates it
// (os.MkdirAll(filepath.Join(dir, channel))) and refused with the reference's error
// text, which the client gets in its PubAck or SubscriptionResponse:
// `mkdir <path>: <Go's text for the errno>`.
//
// Channel names are subjects (util.IsChannelNameValid): never `/`, never a leading
// `.`, so never `..` or a path outside DIR. Anything else a subject may hold goes into
// the directory name as it is (`\`, `+`, ...), as with the reference; what the file
// system refuses is refused: a NUL byte, a name over 255 bytes, a name taken by a
// file of the store (`server.dat`, `clients.dat`).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

// syscall.Errno.Error() of Go on Linux, for the errors mkdir can return.
const GO_ERRNO_TEXT: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EDQUOT: 'disk quota exceeded',
  EEXIST: 'file exists',
  EINVAL: 'invalid argument',
  EIO: 'input/output error',
  ELOOP: 'too many levels of symbolic links',
  EMLINK: 'too many links',
  ENAMETOOLONG: 'file name too long',
  ENOENT: 'no such file or directory',
  ENOSPC: 'no space left on device',
  ENOTDIR: 'not a directory',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
};

/** Creates (if missing) the directory of channel `name` under `root`; returns its path. */
export function makeChannelDir(root: string, name: string): string {
  // Unreachable through the server, which validates names first: a last guard so that
  // no name can leave the root directory.
  if (name === '' || name.startsWith('.') || name.includes('/')) {
    throw new Error(`file store: channel name "${name}" cannot be a directory name`);
  }
  const dir = join(root, name);
  // Node refuses a NUL byte before asking the system; Go passes it and gets EINVAL.
  if (name.includes('\0')) throw new Error(`mkdir ${dir}: ${GO_ERRNO_TEXT.EINVAL}`);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    let code = (err as NodeJS.ErrnoException).code ?? '';
    // MkdirAll on an existing file: Go says ENOTDIR where Node's recursive mkdir says EEXIST.
    if (code === 'EEXIST') code = 'ENOTDIR';
    const text = GO_ERRNO_TEXT[code];
    if (text === undefined) throw err;
    throw new Error(`mkdir ${dir}: ${text}`);
  }
  return dir;
}
