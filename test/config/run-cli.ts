// Runs the wirebus command in this process (main() returns before starting a server
// when -t is given or the config is refused) and captures what it writes to stderr.

import { main } from '../../src/cli.js';

export async function runCli(argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk: string | Uint8Array): boolean => {
    stderr += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  };
  try {
    return { code: await main(argv), stderr };
  } finally {
    process.stderr.write = write;
  }
}
