// The committed generated code is exactly what scripts/gen-proto.sh makes from the
// .proto files: regenerate into a temporary folder and compare file by file.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatedDir, repoRoot } from './paths.js';

it('generated protobuf code matches the .proto files (run scripts/gen-proto.sh if not)', () => {
  const out = mkdtempSync(join(tmpdir(), 'wirebus-proto-'));
  try {
    execFileSync('bash', [join(repoRoot, 'scripts', 'gen-proto.sh'), out], { stdio: 'pipe' });
    const fresh = readdirSync(out).sort();
    assert.deepEqual(readdirSync(generatedDir).sort(), fresh, 'same files');
    for (const name of fresh) {
      const committed = readFileSync(join(generatedDir, name), 'utf8');
      assert.ok(
        committed === readFileSync(join(out, name), 'utf8'),
        `${name} differs from a fresh generation: run scripts/gen-proto.sh and commit`,
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
