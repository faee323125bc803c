// The command line, with the reference server's flag names: `-p 4222`, `--port 4222`,
// `-p=4222` and `--port=4222` all work, as in Go's flag package, and so do the
// reference's multi-letter short flags (`-DV`, `-ms`, `-sl`).

import type { ServerOptions } from './options.js';

/** What the command line asks for, before any config file is read. */
export interface CommandLine {
  options: Partial<ServerOptions>;
  configFile: string;
  testConfig: boolean;
  help: boolean;
  version: boolean;
  /** `-sl sig[=pid]`: send a signal to a running server instead of starting one. */
  signal: string;
  /** Flags given, by option key, so they win over the config file. */
  explicit: Set<string>;
  /** Flags of other layers (streaming, security, cluster) by canonical name. */
  extra: Map<string, string>;
}

export class UsageError extends Error {}

type Apply = (cl: CommandLine, value: string) => void;

interface FlagSpec {
  names: string[];
  /** Takes a value (`-p 4222`); otherwise a boolean that may be given as `-T=false`. */
  value: boolean;
  apply: Apply;
  help: string;
}

function int(name: string, value: string): number {
  if (!/^-?\d+$/.test(value))
    throw new UsageError(`invalid value "${value}" for flag -${name}: parse error`);
  return Number(value);
}

function bool(name: string, value: string): boolean {
  if (
    value === '' ||
    value === 'true' ||
    value === '1' ||
    value === 't' ||
    value === 'T' ||
    value === 'TRUE'
  )
    return true;
  if (value === 'false' || value === '0' || value === 'f' || value === 'F' || value === 'FALSE')
    return false;
  throw new UsageError(`invalid boolean value "${value}" for -${name}: parse error`);
}

function set<K extends keyof ServerOptions>(
  cl: CommandLine,
  key: K,
  value: ServerOptions[K],
): void {
  cl.options[key] = value;
  cl.explicit.add(key);
}

const flags: FlagSpec[] = [
  {
    names: ['a', 'addr', 'net'],
    value: true,
    help: 'Bind to host address (default: 0.0.0.0)',
    apply: (cl, v) => set(cl, 'host', v),
  },
  {
    names: ['p', 'port'],
    value: true,
    help: 'Use port for clients (default: 4222)',
    apply: (cl, v) => set(cl, 'port', int('port', v)),
  },
  {
    names: ['n', 'name', 'server_name'],
    value: true,
    help: 'Server name (default: auto)',
    apply: (cl, v) => set(cl, 'serverName', v),
  },
  {
    names: ['client_advertise'],
    value: true,
    help: 'Client URL to advertise to other servers',
    apply: (cl, v) => set(cl, 'clientAdvertise', v),
  },
  {
    names: ['P', 'pid'],
    value: true,
    help: 'File to store PID',
    apply: (cl, v) => set(cl, 'pidFile', v),
  },
  {
    names: ['ports_file_dir'],
    value: true,
    help: 'Creates a ports file in the specified directory (<executable_name>_<pid>.ports)',
    apply: (cl, v) => set(cl, 'portsFileDir', v),
  },
  {
    names: ['m', 'http_port'],
    value: true,
    help: 'Use port for http monitoring',
    apply: (cl, v) => set(cl, 'httpPort', int('http_port', v)),
  },
  {
    names: ['ms', 'https_port'],
    value: true,
    help: 'Use port for https monitoring',
    apply: (cl, v) => cl.extra.set('https_port', v),
  },
  {
    names: ['c', 'config'],
    value: true,
    help: 'Configuration file',
    apply: (cl, v) => {
      cl.configFile = v;
    },
  },
  {
    names: ['t'],
    value: false,
    help: 'Test configuration and exit',
    apply: (cl, v) => {
      cl.testConfig = bool('t', v);
    },
  },
  {
    names: ['sl', 'signal'],
    value: true,
    help: 'Send signal to wirebus process (ldm, stop, quit, term, reopen, reload)',
    apply: (cl, v) => {
      cl.signal = v;
    },
  },
  {
    names: ['l', 'log'],
    value: true,
    help: 'File to redirect log output',
    apply: (cl, v) => set(cl, 'logFile', v),
  },
  {
    names: ['T', 'logtime'],
    value: false,
    help: 'Timestamp log entries (default: true)',
    apply: (cl, v) => set(cl, 'logtime', bool('logtime', v)),
  },
  {
    names: ['D', 'debug'],
    value: false,
    help: 'Enable debugging output',
    apply: (cl, v) => set(cl, 'debug', bool('debug', v)),
  },
  {
    names: ['V', 'trace'],
    value: false,
    help: 'Trace the raw protocol',
    apply: (cl, v) => set(cl, 'trace', bool('trace', v)),
  },
  {
    names: ['VV'],
    value: false,
    help: 'Verbose trace (traces system account as well)',
    apply: (cl, v) => set(cl, 'trace', bool('VV', v)),
  },
  {
    names: ['DV'],
    value: false,
    help: 'Debug and trace',
    apply: (cl, v) => {
      set(cl, 'debug', bool('DV', v));
      set(cl, 'trace', bool('DV', v));
    },
  },
  {
    names: ['DVV'],
    value: false,
    help: 'Debug and verbose trace',
    apply: (cl, v) => {
      set(cl, 'debug', bool('DVV', v));
      set(cl, 'trace', bool('DVV', v));
    },
  },
  {
    names: ['h', 'help'],
    value: false,
    help: 'Show this message',
    apply: (cl, v) => {
      cl.help = bool('help', v);
    },
  },
  {
    names: ['v', 'version'],
    value: false,
    help: 'Show version',
    apply: (cl, v) => {
      cl.version = bool('version', v);
    },
  },
];

const byName = new Map<string, FlagSpec>();
for (const f of flags) for (const n of f.names) byName.set(n, f);

/** Lets another layer (security, streaming, cluster) register its flags. */
export function registerFlag(spec: {
  names: string[];
  value: boolean;
  help: string;
  apply?: Apply;
}): void {
  const canonical = spec.names[spec.names.length - 1]!;
  const full: FlagSpec = {
    names: spec.names,
    value: spec.value,
    help: spec.help,
    apply:
      spec.apply ??
      ((cl, v) => cl.extra.set(canonical, spec.value ? v : String(bool(canonical, v)))),
  };
  flags.push(full);
  for (const n of spec.names) byName.set(n, full);
}

export function parseCommandLine(argv: readonly string[]): CommandLine {
  const cl: CommandLine = {
    options: {},
    configFile: '',
    testConfig: false,
    help: false,
    version: false,
    signal: '',
    explicit: new Set(),
    extra: new Map(),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-' || arg === '--') {
      throw new UsageError(`unexpected argument: ${arg}`);
    }
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const spec = byName.get(name);
    if (spec === undefined) throw new UsageError(`flag provided but not defined: -${name}`);
    let value: string;
    if (eq >= 0) {
      value = body.slice(eq + 1);
    } else if (spec.value) {
      const next = argv[i + 1];
      if (next === undefined) throw new UsageError(`flag needs an argument: -${name}`);
      value = next;
      i++;
    } else {
      value = '';
    }
    spec.apply(cl, value);
  }
  return cl;
}

export function usage(): string {
  const lines = ['Usage: wirebus [options]', '', 'Options:'];
  for (const f of flags) {
    const names = f.names
      .map((n) => (n.length <= 2 || n === n.toUpperCase() ? `-${n}` : `--${n}`))
      .join(', ');
    lines.push(`    ${(names + (f.value ? ' <value>' : '')).padEnd(40)} ${f.help}`);
  }
  return lines.join('\n') + '\n';
}
