// The directory lock, the reference's: a POSIX record lock (fcntl F_SETLK, F_WRLCK,
// whole file) on DIR/.rootdir.lck. The kernel releases it when its owner dies (kill -9
// included), and nats-streaming-server and wirebus see each other's lock, so both
// kinds can be members of one fault-tolerance group on a shared directory.
//
// Node has no fcntl, so a small Perl process (perl-base is part of every Debian and
// macOS) takes the lock and holds it for us. It reads its stdin: when this process
// ends, however it ends, the pipe closes, the helper exits and the kernel frees the
// lock. Protocol, one line each: "busy PID" (held by process PID), "locked", or
// "error TEXT". In `wait` mode it keeps trying every 250 ms after "busy". It ignores the
// signals a server is sent (HUP reload, USR1, USR2, INT, TERM): they often go to the
// whole process group (a terminal's Ctrl-C or hang-up, `timeout`, `kill -HUP -- -PGID`),
// and a helper killed by one would let go of the lock under a server that runs on.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const LOCK_FILE = '.rootdir.lck';

// struct flock: Linux (x86_64, aarch64) { short type, whence; off_t start, len; pid_t pid }
// with padding; the BSDs and macOS { off_t start, len; pid_t pid; short type, whence }.
const FLOCK_PACK = process.platform === 'linux' ? "'s s x4 q q i x4'" : "'q q i s s'";
const FLOCK_ARGS =
  process.platform === 'linux' ? '(F_WRLCK, SEEK_SET, 0, 0, 0)' : '(0, 0, 0, F_WRLCK, SEEK_SET)';
const FLOCK_PID = process.platform === 'linux' ? 4 : 2;

const HELPER = `
use strict; use Fcntl qw(F_SETLK F_GETLK F_WRLCK SEEK_SET O_RDWR O_CREAT);
$| = 1;
$SIG{$_} = 'IGNORE' for qw(HUP INT TERM QUIT USR1 USR2 PIPE);
my ($path, $mode) = @ARGV;
sysopen(my $fh, $path, O_RDWR | O_CREAT, 0666) or do { print "error $!\\n"; exit 2 };
my $req = pack(${FLOCK_PACK}, ${FLOCK_ARGS});
my $said = 0;
while (1) {
  last if fcntl($fh, F_SETLK, $req);
  if (!$said) {
    my $q = $req; my $pid = 0;
    if (fcntl($fh, F_GETLK, $q)) { $pid = (unpack(${FLOCK_PACK}, $q))[${FLOCK_PID}]; }
    print "busy $pid\\n"; $said = 1;
  }
  exit 1 if $mode ne 'wait';
  my $rin = ''; vec($rin, fileno(STDIN), 1) = 1;
  if (select(my $r = $rin, undef, undef, 0.25) > 0) {
    my $buf; exit 0 if !sysread(STDIN, $buf, 64);
  }
}
print "locked\\n";
my $buf; while (sysread(STDIN, $buf, 64)) {}
exit 0;
`;

export class DirLock {
  readonly path: string;
  private helper: ChildProcess | undefined;
  private held = false;
  private waiting: Promise<void> | undefined;
  private holderPid = 0;
  private releasing = false;

  constructor(
    dir: string,
    private readonly onLost: (owner: string) => void,
  ) {
    this.path = join(dir, LOCK_FILE);
  }

  get isHeld(): boolean {
    return this.held;
  }

  /**
   * True if this store holds the lock now; false if another process does. With
   * `wait`, a helper stays behind and keeps trying: a later call returns true once it
   * has the lock (a fault-tolerance standby polls this way without a process a poll).
   */
  async tryLock(wait = false): Promise<boolean> {
    if (this.held) return true;
    if (this.helper === undefined) await this.start(wait ? 'wait' : 'try');
    else if (this.waiting !== undefined) await Promise.race([this.waiting, Promise.resolve()]);
    return this.held;
  }

  /** Who holds the lock, for error messages. */
  describeOwner(): string {
    return this.holderPid > 0 ? `pid ${this.holderPid}` : 'an unknown process';
  }

  async release(): Promise<void> {
    const h = this.helper;
    this.helper = undefined;
    this.held = false;
    this.waiting = undefined;
    if (h === undefined || h.exitCode !== null || h.signalCode !== null) return;
    this.releasing = true;
    h.ref();
    const exited = new Promise<void>((resolve) => h.once('exit', () => resolve()));
    h.stdin?.end();
    await exited;
    this.releasing = false;
  }

  private start(mode: 'try' | 'wait'): Promise<void> {
    let child: ChildProcess;
    try {
      child = spawn('perl', ['-e', HELPER, this.path, mode], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
    } catch (err) {
      return Promise.reject(lockUnavailable(err));
    }
    this.helper = child;
    const lines = createInterface({ input: child.stdout! });
    return new Promise<void>((resolve, reject) => {
      let first = true;
      const settle = (err?: Error): void => {
        if (!first) return;
        first = false;
        // Once answered, the helper must not keep the event loop alive: the store
        // releases it on close (and it ends with this process anyway).
        child.unref();
        (child.stdout as { unref?: () => void } | null)?.unref?.();
        (child.stdin as { unref?: () => void } | null)?.unref?.();
        if (err === undefined) resolve();
        else reject(err);
      };
      child.once('error', (err) => {
        this.helper = undefined;
        settle(lockUnavailable(err));
      });
      child.once('exit', (code) => {
        if (this.helper === child) this.helper = undefined;
        lines.close();
        const wasHeld = this.held;
        this.held = false;
        if (wasHeld && !this.releasing) this.onLost('nobody (the lock helper ended)');
        settle(code === 1 ? undefined : new Error(`file store: lock helper exited (${code})`));
      });
      lines.on('line', (line) => {
        if (line === 'locked') {
          this.held = true;
          this.waiting = undefined;
          settle();
        } else if (line.startsWith('busy ')) {
          // Answered here, not at the exit: the exit may come before this line is read.
          this.holderPid = Number(line.slice(5)) || 0;
          if (mode === 'wait') {
            this.waiting = new Promise<void>((r) => lines.once('line', () => r()));
          }
          settle();
        } else if (line.startsWith('error ')) {
          settle(new Error(`file store: cannot open ${this.path}: ${line.slice(6)}`));
        }
      });
    });
  }
}

function lockUnavailable(err: unknown): Error {
  return new Error(
    `file store: cannot take the directory lock: perl is needed for it (${String(err)})`,
  );
}
