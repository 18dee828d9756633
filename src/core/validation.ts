import type { z } from 'zod';
import { BadRequest } from './errors';

/** Parses `input` with `schema`, turning the first issue into a readable 400. */
export function parseOr400<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what: string,
): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new BadRequest(`invalid ${what}`);
  const where = issue.path.length ? issue.path.join('.') : what;
  if (issue.code === 'unrecognized_keys') {
    throw new BadRequest(
      `unknown field${issue.keys.length > 1 ? 's' : ''} in ${what}: ${issue.keys.join(', ')}`,
    );
  }
  throw new BadRequest(`${where}: ${issue.message}`);
}
