// The conformance suite every Store implementation runs: memory, file and SQL. A store
// that persists (mustSurviveRestart) also runs the restart tests, which close it and
// open the same data again.
//
//   storeConformanceSuite({ name: 'file', type: 'FILE', mustSurviveRestart: true, open, reopen });
import { describe } from 'node:test';
import type {
  Store,
  StoreHooks,
  StoreLimitsConfig,
  StoreType,
} from '../../src/streaming/store/index.js';
import { channelTests } from './store-suite-channels.js';
import { lifecycleTests } from './store-suite-lifecycle.js';
import { messageTests } from './store-suite-messages.js';
import { restartTests } from './store-suite-restart.js';
import { subscriptionTests } from './store-suite-subs.js';

export interface StoreOpenOptions {
  readonly limits?: StoreLimitsConfig;
  readonly hooks?: StoreHooks;
}

export interface StoreSuiteOptions {
  readonly name: string;
  /** What Store.type must say. */
  readonly type: StoreType;
  /** True for stores whose data must come back after close() and reopen(). */
  readonly mustSurviveRestart: boolean;
  /**
   * Bytes a store counts per message on top of its marshaled MsgProto (spec 2.11:
   * 0 for memory and SQL, 40 for FILE). Default 0.
   */
  readonly msgOverhead?: number;
  /**
   * Subscription IDs unique in the whole store rather than per channel: the
   * reference's SQL store (its SubsPending rows carry no channel). Default false.
   */
  readonly storeWideSubIds?: boolean;
  /** A new, empty store. */
  readonly open: (options: StoreOpenOptions) => Promise<Store>;
  /** Closes `store` and opens its data again with the same options (restart tests). */
  readonly reopen?: (store: Store) => Promise<Store>;
}

/** What each part of the suite gets: opens a store that is closed after the test. */
export interface SuiteContext {
  readonly options: StoreSuiteOptions;
  readonly withStore: (
    open: StoreOpenOptions,
    test: (store: Store) => Promise<void> | void,
  ) => () => Promise<void>;
}

export function storeConformanceSuite(options: StoreSuiteOptions): void {
  const ctx: SuiteContext = {
    options,
    withStore: (open, test) => async () => {
      const store = await options.open(open);
      try {
        await test(store);
      } finally {
        await store.close();
      }
    },
  };
  describe(`${options.name} store conformance`, () => {
    channelTests(ctx);
    messageTests(ctx);
    subscriptionTests(ctx);
    lifecycleTests(ctx);
    restartTests(ctx);
  });
}
