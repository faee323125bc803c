// The atomic replacement of a file (temporary file, fsync, rename) used for
// server.dat, index rebuilds and compactions.
import { open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDir } from './file-io.js';

/**
 * Replaces `path` with `chunks` atomically: a crash leaves the old file or the new
 * one, never a mix. The temporary file is synced before the rename whatever the
 * sync option, since the rename makes it the only copy.
 */
export async function replaceFile(path: string, chunks: readonly Buffer[]): Promise<void> {
  const tmp = `${path}.tmp`;
  const h = await open(tmp, 'w', 0o644);
  try {
    await h.writev(chunks as Buffer[], 0);
    await h.datasync();
  } catch (err) {
    await h.close();
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await h.close();
  await rename(tmp, path);
  await syncDir(dirname(path));
}
