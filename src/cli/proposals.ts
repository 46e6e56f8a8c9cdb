/**
 * `pactum proposals import <file.json>`: loads regulatory update proposals (a JSON array, or
 * {"proposals": [...]}) into the database, each checked against the Proposal schema. A proposal
 * without an id gets one; without a status it is pending. Importing the same id again updates it.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { validator } from '../../generated/operations.js';
import { upsertProposal } from '../db/proposals.js';
import { describeErrors } from '../http/router.js';
import { newId } from '../ground/ids.js';
import { UsageError, withDb } from './args.js';

export async function proposals(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { positionals } = parseArgs({ args: rest, allowPositionals: true });
  const [file] = positionals;
  if (sub !== 'import' || positionals.length !== 1 || file === undefined) throw new UsageError('usage: pactum proposals import <file.json>');
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { proposals?: unknown[] })?.proposals;
  if (!Array.isArray(list)) throw new UsageError('the file must hold a JSON array of proposals, or {"proposals": [...]}');
  const validate = validator('dashboard', 'schema_proposal');
  const checked = list.map((p, i) => {
    const candidate = { id: newId('prp'), status: 'pending', ...(p as object) };
    if (!validate(candidate)) throw new UsageError(`proposal ${i + 1}: ${describeErrors(validate.errors, '')}`);
    return candidate as Parameters<typeof upsertProposal>[1];
  });
  return withDb(async (db) => {
    for (const p of checked) await upsertProposal(db, p);
    console.log(`imported ${checked.length} proposal${checked.length === 1 ? '' : 's'}`);
    return 0;
  }, { creates: true });
}
