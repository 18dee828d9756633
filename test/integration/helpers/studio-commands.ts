/**
 * The studio's commands as the UI sends them (validated as over IPC or HTTP), for tests that
 * drive a studio: `call` answers the command's result or throws with its error; `until` waits for
 * a probe to answer something.
 */
import { runCommand, type Studio } from '../../../src/studio';
import type { StudioCommandName, StudioCommandResults } from '../../../src/shared/studio';

export async function call<K extends StudioCommandName>(
  studio: Studio,
  name: K,
  args: unknown,
): Promise<StudioCommandResults[K]> {
  const outcome = await runCommand(studio.commands, name, args);
  if (!outcome.ok) throw new Error(`${name}: ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.result as StudioCommandResults[K];
}

/** What `probe` answers first that is truthy, asked every 100 ms for up to `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
