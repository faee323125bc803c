// With WIREBUS_NET_SOCKETS=1 (or on a Node without the handle internals wirebus uses)
// plain client connections are net.Sockets, and behave the same.

import { transportCases } from './transport-cases.js';

// Read at the first listen, after this module's imports have run.
process.env.WIREBUS_NET_SOCKETS = '1';

transportCases('socket');
