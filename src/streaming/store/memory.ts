// The MEMORY store: everything in this process, nothing survives a restart. Limits
// are enforced as in the reference (max_channels on create, max_subscriptions on
// subscribe, max_msgs/max_bytes on store, max_age by a timer per channel) and
// max_inactivity is reported through the onChannelInactive hook.
import { ChannelRegistry, RegistryStore } from './channel-registry.js';
import { StoreError } from './errors.js';
import { watchChannelInactivity, type InactivityWatch } from './inactivity.js';
import type { ChannelLimits, StoreLimitsConfig } from './limits.js';
import { ResolvedLimits } from './limits.js';
import { MemoryMsgStore } from './memory-msgs.js';
import { MemorySubStore } from './memory-subs.js';
import type {
  ChannelStore,
  ClientRecord,
  RecoveredState,
  ServerInfoRecord,
  Store,
  StoreHooks,
} from './types.js';

export interface MemoryStoreOptions extends StoreHooks {
  /** Limits as configured (validated here; throws StoreError INVALID_LIMITS), or resolved. */
  readonly limits?: StoreLimitsConfig | ResolvedLimits;
}

// Shared by every flush: the memory store has nothing to wait for.
const DONE: Promise<void> = Promise.resolve();

class MemoryChannel implements ChannelStore {
  readonly msgs: MemoryMsgStore;
  readonly subs: MemorySubStore;
  private readonly watch: InactivityWatch | undefined;

  constructor(
    readonly name: string,
    readonly limits: ChannelLimits,
    isClosed: () => boolean,
    hooks: StoreHooks,
  ) {
    this.watch = watchChannelInactivity(name, limits, hooks, () => this.subs.hasActive());
    const touch = this.watch?.touch;
    this.msgs = new MemoryMsgStore(name, limits, { isClosed, warn: hooks.warn, onStored: touch });
    this.subs = new MemorySubStore(limits.maxSubscriptions, isClosed, touch);
  }

  dispose(): void {
    this.msgs.stopTimer();
    this.watch?.stop();
  }
}

export class MemoryStore extends RegistryStore<MemoryChannel> implements Store {
  readonly type = 'MEMORY' as const;
  readonly limits: ResolvedLimits;
  private readonly hooks: StoreHooks;
  protected readonly channelsByName: ChannelRegistry<MemoryChannel>;
  private readonly clientMap = new Map<string, ClientRecord>();
  private info: ServerInfoRecord | undefined;
  private closed = false;
  private readonly isClosed = (): boolean => this.closed;

  constructor(options: MemoryStoreOptions = {}) {
    super();
    this.limits = ResolvedLimits.from(options.limits);
    this.channelsByName = new ChannelRegistry(this.limits.global.maxChannels);
    this.hooks = options;
  }

  /** Nothing is persisted: there is never anything to recover. */
  recover(): Promise<RecoveredState | undefined> {
    return Promise.resolve(undefined);
  }

  init(info: ServerInfoRecord): void {
    this.checkOpen();
    this.info = { ...info };
  }

  /** The server info given to init(), if any (the same process only). */
  get serverInfo(): ServerInfoRecord | undefined {
    return this.info;
  }

  addClient(client: ClientRecord): void {
    this.checkOpen();
    this.clientMap.set(client.id, { ...client });
  }

  deleteClient(id: string): void {
    this.checkOpen();
    this.clientMap.delete(id);
  }

  clients(): IterableIterator<ClientRecord> {
    return this.clientMap.values();
  }

  createChannel(name: string): ChannelStore {
    this.checkOpen();
    this.channelsByName.checkCreate(name);
    const channel = new MemoryChannel(
      name,
      this.limits.forChannel(name),
      this.isClosed,
      this.hooks,
    );
    this.channelsByName.add(channel);
    return channel;
  }

  deleteChannel(name: string): void {
    this.checkOpen();
    this.channelsByName.remove(name).dispose();
  }

  flush(): Promise<void> {
    return DONE;
  }

  /** A memory store cannot be shared between servers (the reference refuses FT on it). */
  tryExclusiveLock(): Promise<boolean> {
    return Promise.reject(new StoreError('NOT_SUPPORTED'));
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      for (const channel of this.channelsByName.values()) channel.dispose();
    }
    return DONE;
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreError('CLOSED');
  }
}
