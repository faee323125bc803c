// Mixed fault-tolerance groups on one database: nats-streaming-server and wirebus as
// the two members of one ft_group, either one active. The active one is killed with
// kill -9 during acknowledged publishing and the other takes over with every
// acknowledged message and the durable's position (ft-scenario.ts). That is the
// migration without downtime: add wirebus as the standby, stop the reference. Needs
// the reference binary: skipped without it.
import { after, describe, it } from 'node:test';
import type { SqlDriver } from '../../src/streaming/store/sql/index.js';
import {
  failover,
  referenceMember,
  stopAll,
  wirebusMember,
  type StartMember,
} from './ft-scenario.js';
import {
  DRIVERS,
  loadInto,
  referenceSource,
  skipWithoutDriver,
  sqlDatabase,
} from './sql-databases.js';
import { skipWithoutReference } from './stan-reference.js';

after(stopAll);

const noRef = skipWithoutReference();

async function members(driver: SqlDriver): Promise<{ ref: StartMember; wb: StartMember }> {
  const db = await sqlDatabase(driver);
  // The reference wants its tables made beforehand (by its script; these are the same).
  await loadInto(driver, db.source, []);
  return {
    ref: referenceMember([
      '-st',
      'SQL',
      '--sql_driver',
      driver,
      '--sql_source',
      referenceSource(driver, db.source),
    ]),
    wb: wirebusMember(['-st', 'SQL', '--sql_driver', driver, '--sql_source', db.source]),
  };
}

for (const driver of DRIVERS) {
  const skip = noRef !== false ? noRef : await skipWithoutDriver(driver);
  describe(`mixed fault-tolerance group on ${driver}`, { skip }, () => {
    it('the reference active, wirebus standby: wirebus takes over after kill -9', async () => {
      const { ref, wb } = await members(driver);
      await failover(ref, wb);
    });

    it('wirebus active, the reference standby: the reference takes over after kill -9', async () => {
      const { ref, wb } = await members(driver);
      await failover(wb, ref);
    });
  });
}
