// The name this process goes by, as the reference's os.Args[0]: the program as
// invoked. A symlink named `nats-server` pointing at bin/wirebus writes
// `nats-server_<pid>.ports` (the file test harnesses wait for) and its `--signal`
// looks for processes named `nats-server`. Embedded servers keep `wirebus`.

export const DEFAULT_PROCESS_NAME = 'wirebus';

let name = DEFAULT_PROCESS_NAME;

export function processName(): string {
  return name;
}

/** Set by the command from the name it was invoked by (the basename of its script). */
export function setProcessName(invokedAs: string): void {
  name = invokedAs === '' ? DEFAULT_PROCESS_NAME : invokedAs;
}
