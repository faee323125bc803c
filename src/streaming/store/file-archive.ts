// slice_archive_script: when limits remove a slice, its two files are renamed with a
// `.bak` suffix and the script is run with (channel, dat, idx), as the reference
// does; the script moves or removes them. Its output is logged.
import { execFile } from 'node:child_process';
import { rename, unlink } from 'node:fs/promises';
import type { Slice } from './file-slice.js';

const BAK = '.bak';

/** True if the files were handed to the script (renamed), false to remove them. */
export async function archiveSlice(
  script: string,
  channel: string,
  slice: Slice,
  log: (text: string) => void,
): Promise<boolean> {
  const dat = slice.dat.path + BAK;
  const idx = slice.idx.path + BAK;
  try {
    await rename(slice.dat.path, dat);
  } catch {
    return false;
  }
  try {
    await rename(slice.idx.path, idx);
  } catch {
    await unlink(dat).catch(() => undefined);
    return false;
  }
  // Not awaited: the script runs beside the server, as the reference's goroutine.
  execFile(script, [channel, dat, idx], (err, stdout, stderr) => {
    const output = `${stdout}${stderr}`;
    log(
      err === null
        ? `Output of archive script for ${channel} (${dat} and ${idx}): ${output}`
        : `Error invoking archive script "${script}": ${err.message} (output=${output})`,
    );
  });
  return true;
}
