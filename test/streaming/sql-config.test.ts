// -st SQL and --ft_group settings: the reference's flags and the config file's
// sql_options section, and the start-up checks with their texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/conf.js';
import { parseCommandLine } from '../../src/config/flags.js';
import { applyConfig } from '../../src/config/load.js';
import { resolveStreamingSettings } from '../../src/streaming/config.js';
import { resolveStreamingOptions, validateStreamingOptions } from '../../src/streaming/options.js';
import { mysqlConfig } from '../../src/streaming/store/sql/mysql.js';
import { postgresConfig } from '../../src/streaming/store/sql/postgres.js';

describe('SQL and fault-tolerance settings', () => {
  it('flags: --sql_no_caching, --sql_max_open_conns and --sql_bulk_insert_limit', () => {
    const s = resolveStreamingSettings(
      parseCommandLine([
        '-st',
        'SQL',
        '--sql_driver',
        'mysql',
        '--sql_source',
        'u:p@tcp(db:3306)/stan',
        '--sql_no_caching',
        '--sql_max_open_conns',
        '7',
        '--sql_bulk_insert_limit',
        '64',
      ]),
      null,
    );
    assert.equal(s.options.sqlDriver, 'mysql');
    assert.equal(s.options.sqlNoCaching, true);
    assert.equal(s.options.sqlMaxOpenConns, 7);
    assert.equal(s.options.sqlBulkInsertLimit, 64);
  });

  it('flags: -st SQL --sql_driver --sql_source --ft_group', () => {
    const cl = parseCommandLine([
      '-st',
      'sql',
      '--sql_driver',
      'postgres',
      '--sql_source',
      'postgres://u@db/stan',
      '--ft_group',
      'grp',
    ]);
    const s = resolveStreamingSettings(cl, null);
    assert.equal(s.enabled, true);
    assert.equal(s.options.storeType, 'SQL');
    assert.equal(s.options.sqlDriver, 'postgres');
    assert.equal(s.options.sqlSource, 'postgres://u@db/stan');
    assert.equal(s.options.ftGroup, 'grp');
  });

  it('config: sql_options { driver, source } and ft_group, flags winning', () => {
    const tree = parseConfigText(
      `streaming {
        store: "SQL"
        ft_group: "g1"
        sql_options {
          driver: "postgres"
          source: "postgres://from-file/db"
          max_conns: 5
          no_caching: true
          bulk_insert_limit: 100
        }
      }`,
      'test.conf',
    );
    const config = applyConfig(tree, 'test.conf');
    const s = resolveStreamingSettings(
      parseCommandLine(['--sql_source', 'postgres://from-flag/db']),
      config,
    );
    assert.equal(s.options.storeType, 'SQL');
    assert.equal(s.options.sqlDriver, 'postgres');
    assert.equal(s.options.sqlSource, 'postgres://from-flag/db');
    assert.equal(s.options.ftGroup, 'g1');
    assert.equal(s.options.sqlMaxOpenConns, 5);
    assert.equal(s.options.sqlNoCaching, true);
    assert.equal(s.options.sqlBulkInsertLimit, 100);
    assert.deepEqual(s.warnings, []);
  });

  it('refuses a SQL store without driver or source, another driver, FT on MEMORY', () => {
    const check = (o: Parameters<typeof resolveStreamingOptions>[0]) =>
      validateStreamingOptions(resolveStreamingOptions(o));
    assert.deepEqual(check({ storeType: 'SQL' }), [
      'sql: --sql_driver (postgres or mysql) and --sql_source are required for the SQL store',
    ]);
    assert.deepEqual(check({ storeType: 'SQL', sqlDriver: 'sqlite', sqlSource: 'x' }), [
      'sql: driver "sqlite" is not supported (postgres or mysql)',
    ]);
    assert.deepEqual(check({ storeType: 'SQL', sqlDriver: 'mysql', sqlSource: 'x' }), []);
    assert.deepEqual(check({ ftGroup: 'g' }), ['ft: only FILE or SQL stores supported in FT mode']);
    assert.deepEqual(check({ storeType: 'SQL', sqlDriver: 'postgres', sqlSource: 'x' }), []);
  });

  it("--sql_source as the reference's drivers take it (lib/pq, go-sql-driver)", () => {
    assert.deepEqual(postgresConfig('postgres://u:p@db:5433/stan?sslmode=disable'), {
      connectionString: 'postgres://u:p@db:5433/stan?sslmode=disable',
    });
    assert.deepEqual(
      postgresConfig("host=db port=5433 dbname=stan user=u password='p \\'w' sslmode=disable"),
      { host: 'db', port: 5433, database: 'stan', user: 'u', password: "p 'w", ssl: false },
    );
    assert.throws(() => postgresConfig('host=db nonsense'), /invalid PostgreSQL source/);
    assert.deepEqual(mysqlConfig('u:p@ss@tcp(db:3307)/stan?parseTime=true'), {
      database: 'stan',
      user: 'u',
      password: 'p@ss',
      host: 'db',
      port: 3307,
    });
    assert.deepEqual(mysqlConfig('root@unix(/run/mysqld/mysqld.sock)/stan'), {
      database: 'stan',
      user: 'root',
      socketPath: '/run/mysqld/mysqld.sock',
    });
    assert.deepEqual(mysqlConfig('/stan'), { database: 'stan', host: '127.0.0.1', port: 3306 });
    assert.deepEqual(mysqlConfig('mysql://u@db/stan'), { uri: 'mysql://u@db/stan' });
    assert.throws(() => mysqlConfig('u@udp(db)/stan'), /unsupported MySQL network/);
  });
});
