// Flags of the reference that wirebus accepts and ignores, so that an existing
// nats-server command line starts wirebus unchanged, with a warning naming each:
// syslog (-s, -r), log file rotation by size, traced payload length (payloads are
// never traced) and the profiler, as the config file's keys for them.

import { type CommandLine, registerFlag } from '../config/flags.js';

const PREFIX = 'ignored:';

const IGNORED: readonly { names: string[]; value: boolean; help: string }[] = [
  { names: ['s', 'syslog'], value: false, help: 'Log to syslog (not supported, ignored)' },
  {
    names: ['r', 'remote_syslog'],
    value: true,
    help: 'Syslog server addr (not supported, ignored)',
  },
  { names: ['log_size_limit'], value: true, help: 'Logfile size limit (not supported, ignored)' },
  {
    names: ['max_traced_msg_len'],
    value: true,
    help: 'Maximum printable length for traced messages (payloads are not traced)',
  },
  { names: ['profile'], value: true, help: 'Profiling HTTP port (not supported, ignored)' },
];

for (const flag of IGNORED) {
  const canonical = flag.names[flag.names.length - 1]!;
  registerFlag({
    ...flag,
    apply: (cl, v) => cl.extra.set(PREFIX + canonical, v),
  });
}

/** One warning per ignored flag the command line gave, for the log. */
export function ignoredFlagWarnings(cl: CommandLine): string[] {
  const out: string[] = [];
  for (const key of cl.extra.keys()) {
    if (key.startsWith(PREFIX)) {
      out.push(`flag --${key.slice(PREFIX.length)} is not supported by wirebus and is ignored`);
    }
  }
  return out;
}
