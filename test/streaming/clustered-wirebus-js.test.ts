// The clustered scenario (clustered-scenario.ts) on wirebus's own JetStream: one
// `bin/wirebus -js` as the single engine node of three wirebus --clustered nodes.
import { clusteredScenario } from './clustered-scenario.js';

clusteredScenario('wirebus');
