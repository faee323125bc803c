// The clustered mode's settings: the reference's --clustered / --cluster_* flags and
// the `streaming { cluster { ... } }` section start a clustered node unchanged; what
// means nothing without a local raft log is accepted and listed for one log line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/conf.js';
import { parseCommandLine } from '../../src/config/flags.js';
import { applyConfig } from '../../src/config/load.js';
import { resolveStreamingSettings } from '../../src/streaming/config.js';
import { DEFAULT_CLUSTERING } from '../../src/streaming/cluster/options.js';
import { resolveStreamingOptions, validateStreamingOptions } from '../../src/streaming/options.js';

describe('clustered mode settings', () => {
  it('the reference command line of a clustered node', () => {
    // As three reference nodes are started: -st FILE --dir name only local scratch here.
    const cl = parseCommandLine([
      '-ns',
      'nats://127.0.0.1:4222,nats://127.0.0.1:4223',
      '--clustered',
      '--cluster_node_id',
      'a',
      '--cluster_peers',
      'b, c',
      '--cluster_bootstrap',
      '--cluster_log_path',
      '/data/raft/a',
      '--cluster_sync',
      '--cluster_raft_logging',
      '-st',
      'FILE',
      '--dir',
      '/data/a',
    ]);
    const s = resolveStreamingSettings(cl, null);
    assert.equal(s.enabled, true);
    const c = s.options.clustering;
    assert.ok(c);
    assert.equal(c.nodeId, 'a');
    assert.deepEqual(c.peers, ['b', 'c']);
    assert.deepEqual(c.ignored, [
      '--cluster_bootstrap',
      '--cluster_log_path',
      '--cluster_sync',
      '--cluster_raft_logging',
    ]);
    assert.equal(c.leaseTimeout, DEFAULT_CLUSTERING.leaseTimeout);
    assert.deepEqual(validateStreamingOptions(resolveStreamingOptions(s.options)), []);
  });

  it('no --clustered: not clustered; --clustered=false wins over the config file', () => {
    assert.equal(
      resolveStreamingSettings(parseCommandLine(['--streaming']), null).options.clustering,
      undefined,
    );
    const config = applyConfig(
      parseConfigText('streaming { cluster { node_id: "x" } }', 't.conf'),
      't.conf',
    );
    const off = resolveStreamingSettings(parseCommandLine(['--clustered=false']), config);
    assert.equal(off.options.clustering, null);
  });

  it('the config file: streaming { cluster { ... } }, flags on top', () => {
    const tree = parseConfigText(
      `streaming {
        id: prod
        nats_server_url: "nats://127.0.0.1:4222"
        cluster {
          node_id: "b"
          bootstrap: true
          peers: ["a", "c"]
          log_path: "/data/raft"
          raft_lease_timeout: "2s"
          raft_election_timeout: "3s"
          raft_heartbeat_timeout: "2s"
        }
      }`,
      'c.conf',
    );
    const config = applyConfig(tree, 'c.conf');
    const s = resolveStreamingSettings(parseCommandLine(['--cluster_node_id', 'z']), config);
    const c = s.options.clustering;
    assert.ok(c);
    assert.equal(s.options.clusterId, 'prod');
    assert.equal(c.nodeId, 'z');
    assert.deepEqual(c.peers, ['a', 'c']);
    assert.equal(c.leaseTimeout, 2000);
    assert.equal(c.renewInterval, 400);
    assert.equal(c.electionTimeout, 3000);
    assert.deepEqual(c.ignored, ['bootstrap', 'log_path', 'raft_heartbeat_timeout']);
    assert.deepEqual(validateStreamingOptions(resolveStreamingOptions(s.options)), []);
  });

  it('refuses a clustered node without -ns, with an election shorter than the lease, with FT', () => {
    const check = (o: Parameters<typeof resolveStreamingOptions>[0]) =>
      validateStreamingOptions(resolveStreamingOptions(o));
    assert.deepEqual(check({ clustering: { ...DEFAULT_CLUSTERING } }), [
      'cluster: clustered mode keeps the channels in the JetStream of a NATS cluster: give its URLs with -ns (--nats_server)',
    ]);
    assert.deepEqual(
      check({
        natsServer: 'nats://127.0.0.1:4222',
        ftGroup: 'g',
        storeType: 'FILE',
        dir: '/tmp/x',
        clustering: {
          ...DEFAULT_CLUSTERING,
          nodeId: 'a.b',
          leaseTimeout: 5000,
          electionTimeout: 5000,
        },
      }),
      [
        `cluster: invalid node ID "a.b", only alphanumeric and '-', '_' allowed`,
        'cluster: raft_election_timeout (5000 ms) must be greater than raft_lease_timeout (5000 ms)',
        'ft_group and clustering cannot be used together',
      ],
    );
  });

  it('a bad value in the cluster section names the key', () => {
    const tree = parseConfigText('streaming { cluster { peers: "a,b" } }', 'bad.conf');
    assert.throws(
      () => resolveStreamingSettings(parseCommandLine([]), applyConfig(tree, 'bad.conf')),
      /peers: expected an array, got string/,
    );
  });
});
