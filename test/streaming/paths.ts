// Paths of the repository seen from the compiled tests (dist/test/streaming/*.js).
import { resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '..', '..', '..');
export const protoDir = resolve(repoRoot, 'src', 'streaming', 'protocol', 'proto');
export const generatedDir = resolve(repoRoot, 'src', 'streaming', 'protocol', 'generated');
