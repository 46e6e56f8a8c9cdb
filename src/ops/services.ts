/**
 * What the operational endpoints are given by the composition (app/services.ts): each factory
 * names the parts it takes (Pick).
 */
import type { Config } from '../ground/config.js';
import type { Db } from '../db/knex.js';
import type { ObjectStores } from '../objects/services.js';

export interface OpsDeps {
  config: Config;
  db: Db;
  objects: Pick<ObjectStores, 'store'>;
}
