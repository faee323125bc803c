// The clustered scenario (clustered-scenario.ts) on three nats-server 2.9 nodes with
// JetStream clustering, as .ci/run installs nats-server.
import { clusteredScenario } from './clustered-scenario.js';

clusteredScenario('nats-server');
