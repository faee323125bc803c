// The channels of a store by name, with the rules every store type applies to them in
// the same way, as the reference's stores do: a new channel is refused with
// ALREADY_EXISTS before TOO_MANY_CHANNELS (max_channels), deleting an unknown one is
// NOT_FOUND, and totals are summed over the channels. What a channel is (objects in
// memory, a directory, rows) is the store's business, not this.
import { StoreError } from './errors.js';
import type { ChannelStore } from './types.js';

export class ChannelRegistry<C extends ChannelStore> {
  private readonly byName = new Map<string, C>();

  constructor(
    /** max_channels; 0: unlimited. */
    private readonly maxChannels: number,
  ) {}

  get size(): number {
    return this.byName.size;
  }

  /** Throws ALREADY_EXISTS or TOO_MANY_CHANNELS unless a channel `name` may be created. */
  checkCreate(name: string): void {
    if (this.byName.has(name)) throw new StoreError('ALREADY_EXISTS');
    const max = this.maxChannels;
    if (max > 0 && this.byName.size >= max) throw new StoreError('TOO_MANY_CHANNELS');
  }

  /**
   * Adds a channel under its name: one just created (after checkCreate), or one
   * recovered (unchecked: what a previous run stored is kept whatever the limits).
   */
  add(channel: C): void {
    this.byName.set(channel.name, channel);
  }

  get(name: string): C | undefined {
    return this.byName.get(name);
  }

  /** Removes the channel and returns it, for its store to dispose of; throws NOT_FOUND. */
  remove(name: string): C {
    const channel = this.byName.get(name);
    if (channel === undefined) throw new StoreError('NOT_FOUND');
    this.byName.delete(name);
    return channel;
  }

  values(): IterableIterator<C> {
    return this.byName.values();
  }

  /** Messages and bytes stored over all channels (Store.totals). */
  totals(): { msgs: number; bytes: number } {
    let msgs = 0;
    let bytes = 0;
    for (const { msgs: m } of this.byName.values()) {
      msgs += m.count;
      bytes += m.bytes;
    }
    return { msgs, bytes };
  }
}

/**
 * The Store methods that only read the registry, the same for every store type;
 * a store extends this and sets channelsByName in its constructor.
 */
export abstract class RegistryStore<C extends ChannelStore> {
  protected abstract readonly channelsByName: ChannelRegistry<C>;

  lookupChannel(name: string): ChannelStore | undefined {
    return this.channelsByName.get(name);
  }

  channels(): IterableIterator<ChannelStore> {
    return this.channelsByName.values();
  }

  get channelCount(): number {
    return this.channelsByName.size;
  }

  totals(): { msgs: number; bytes: number } {
    return this.channelsByName.totals();
  }
}
