/**
 * The Store contract (store-contract.ts) on PostgreSQL: each store gets a fresh schema in this
 * file's database, migrated on open.
 */
import { randomBytes } from 'node:crypto';
import { openPostgresStore } from '../../src/core/store/pg/index';
import { describePostgres } from '../support/postgres';
import { describeStoreContract } from './store-contract';

describePostgres('PostgreSQL store', (databaseUrl) => {
  describeStoreContract('postgres', () =>
    openPostgresStore(databaseUrl(), { schema: `store_${randomBytes(6).toString('hex')}`, max: 12, applicationName: 'store-contract' }),
  );
});
