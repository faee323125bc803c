// Stream, consumer and account names become directory names as they are: refuse the
// ones that would not stay inside their parent directory.

export function checkName(kind: string, name: string): void {
  if (
    name.length === 0 ||
    name === '.' ||
    name === '..' ||
    /[/\\\0]/.test(name) ||
    Buffer.byteLength(name) > 255
  ) {
    throw new Error(`file store: invalid ${kind} name ${JSON.stringify(name)}`);
  }
}
