// The JetStream engine of one server: its settings and totals, and JetStream in each
// account that has it. It is an in-process subscriber of the core server, as the
// streaming layer is: the core knows it only through Server.jetstream (INFO's
// `jetstream` and `domain`).

import { mkdirSync, statfsSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Account } from '../server/account.js';
import type { Server } from '../server/server.js';
import type { Subscription } from '../server/subscription.js';
import { JsAccount } from './account.js';
import { jsz, varz } from './monitor.js';
import { UNLIMITED_ACCOUNT, type JetStreamOptions, type JsAccountLimits } from './options.js';
import { FileStorage } from './storage/file.js';

/** The reference's default file store size when the disk's is unknown: 1 TB. */
const DEFAULT_MAX_FILE = 1024 ** 4;

/** 75% of the space left where the streams go, as the reference's diskAvailable. */
function diskAvailable(storeDir: string): number {
  const dir = storeDir === '' ? tmpdir() : storeDir;
  try {
    mkdirSync(dir, { recursive: true });
    const st = statfsSync(dir);
    return Math.floor((st.bavail * st.bsize) / 4) * 3;
  } catch {
    return DEFAULT_MAX_FILE;
  }
}

/** An account's JetStream limits from its configuration; null: JetStream off there. */
function limitsOf(account: Account, configured: boolean): JsAccountLimits | null {
  const setting = account.jetstream;
  if (!configured || setting === true) return UNLIMITED_ACCOUNT;
  if (setting === undefined || setting === false) return null;
  return {
    maxMemory: setting.maxMemory ?? -1,
    maxStore: setting.maxStore ?? -1,
    maxStreams: setting.maxStreams ?? -1,
    maxConsumers: setting.maxConsumers ?? -1,
    maxAckPending: setting.maxAckPending ?? -1,
    memoryMaxStreamBytes: setting.memoryMaxStreamBytes ?? -1,
    storeMaxStreamBytes: setting.storeMaxStreamBytes ?? -1,
    maxBytesRequired: setting.maxBytesRequired ?? false,
  };
}

export class JetStream {
  readonly accounts = new Map<string, JsAccount>();
  /**
   * The accounts' values, kept beside the map: every stored message's limits check sums
   * their usage (memoryUsed, storeUsed), and an index loop is what a fresh server
   * compiles on its publish path in place of a Map iterator.
   */
  private accountList: JsAccount[] = [];
  /** Accounts without JetStream, which only answer that they have none. */
  private readonly disabled = new Map<string, JsAccount>();
  readonly maxMemory: number;
  readonly maxStore: number;
  apiTotal = 0;
  apiErrors = 0;
  /** File streams' storage under store_dir; null without one (file streams stay in memory). */
  readonly files: FileStorage | null;

  constructor(
    readonly server: Server,
    readonly options: JetStreamOptions,
  ) {
    this.maxMemory =
      options.maxMemoryStore >= 0 ? options.maxMemoryStore : Math.floor((totalmem() * 3) / 4);
    this.maxStore =
      options.maxFileStore >= 0 ? options.maxFileStore : diskAvailable(options.storeDir);
    this.files =
      options.storeDir === ''
        ? null
        : new FileStorage({
            storeDir: options.storeDir,
            // 0 is `sync_interval: always` in the options.
            syncInterval: options.syncInterval === 0 ? 'always' : options.syncInterval,
            warn: (text) => {
              server.logger.warn(`JetStream: ${text}`);
            },
          });
  }

  /** Turns JetStream on in an account (with its limits; unlimited by default). */
  enableAccount(account: Account, limits: JsAccountLimits = UNLIMITED_ACCOUNT): JsAccount {
    let jsa = this.accounts.get(account.name);
    if (jsa === undefined) {
      jsa = new JsAccount(this, account, { ...limits });
      this.accounts.set(account.name, jsa);
      this.accountList.push(jsa);
      jsa.start();
    }
    return jsa;
  }

  /**
   * JetStream in the server's accounts, as the reference decides: with no accounts
   * configured, the global account has it; otherwise only the accounts whose
   * configuration enables it, and the others answer "not enabled for account".
   */
  enableAccounts(): void {
    const accounts = [...this.server.accounts.values()];
    const configured = accounts.length > 1;
    for (const account of accounts) {
      const limits = limitsOf(account, configured);
      if (limits !== null) {
        this.enableAccount(account, limits);
      } else if (!this.disabled.has(account.name)) {
        const jsa = new JsAccount(this, account, { ...UNLIMITED_ACCOUNT }, false);
        this.disabled.set(account.name, jsa);
        jsa.start();
      }
    }
  }

  /**
   * After a config reload changed the accounts (the reference's reloadAuthorization,
   * then enableJetStreamAccounts): an account that appeared gets JetStream as its
   * configuration says, one whose JetStream was turned off stops its streams (their
   * data stays) and answers "not enabled for account", one turned on starts (its
   * streams recovered from store_dir), one whose limits changed takes the new ones, and
   * one that is gone stops.
   */
  async reloadAccounts(): Promise<void> {
    const accounts = this.server.accounts;
    const configured = accounts.size > 1;
    const leaving: JsAccount[] = [];
    for (const [name, jsa] of this.accounts) {
      const account = accounts.get(name);
      const limits = account === jsa.account ? limitsOf(account, configured) : null;
      if (limits === null) {
        this.accounts.delete(name);
        leaving.push(jsa);
      } else jsa.limits = { ...limits };
    }
    for (const [name, jsa] of this.disabled) {
      const account = accounts.get(name);
      if (account !== jsa.account || limitsOf(account, configured) !== null) {
        this.disabled.delete(name);
        leaving.push(jsa);
      }
    }
    this.accountList = [...this.accounts.values()];
    for (const jsa of leaving) await jsa.stop();
    this.enableAccounts();
  }

  accountDir(name: string): string {
    return this.options.storeDir === '' ? '' : join(this.options.storeDir, 'jetstream', name);
  }

  memoryUsed(): number {
    const list = this.accountList;
    let n = 0;
    for (let i = 0; i < list.length; i++) n += list[i]!.memoryUsed;
    return n;
  }

  storeUsed(): number {
    const list = this.accountList;
    let n = 0;
    for (let i = 0; i < list.length; i++) n += list[i]!.storeUsed;
    return n;
  }

  subscribed(sub: Subscription): void {
    const jsa = this.accounts.get(sub.client.account.name);
    if (jsa !== undefined && jsa.awaiting.size > 0) jsa.interestAppeared(sub.subject);
  }

  jsz(query: URLSearchParams): Record<string, unknown> {
    return jsz(this, query);
  }

  varz(): Record<string, unknown> {
    return varz(this);
  }

  /** INFO fields: `jetstream` (and the domain when one is set). */
  clientInfo(info: Record<string, unknown>): void {
    info.jetstream = true;
  }

  get domain(): string {
    return this.options.domain;
  }

  async stop(): Promise<void> {
    for (const a of this.accounts.values()) await a.stop();
    for (const a of this.disabled.values()) await a.stop();
    await this.files?.close();
  }
}
