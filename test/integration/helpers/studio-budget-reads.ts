/** A studio engine with its own clock movable, read through `budget.get` as the UI reads it. */
import type { ServiceClient } from '../../../src/client';
import type { BudgetView } from '../../../src/shared/studio';
import { createCommands, runCommand } from '../../../src/studio/commands';
import { StudioEngine } from '../../../src/studio/engine';
import { HotFolders } from '../../../src/studio/folders';

/**
 * A studio engine on `dataDir` whose own clock `skew` moves on (the process's clock unmoved),
 * so its balance cache can go stale, and `budgetGet`, the UI's `budget.get` command.
 * `onCleanup` receives the engine's close, to run after the test.
 */
export function engineWithBudgetReads(
  opts: { dataDir: string; client: ServiceClient; apiKey: string },
  onCleanup: (close: () => Promise<void>) => void,
) {
  let skewMs = 0;
  const engine = new StudioEngine({ ...opts, now: () => new Date(Date.now() + skewMs) });
  onCleanup(() => engine.close());
  const commands = createCommands(engine, new HotFolders(engine));
  return {
    engine,
    skew(ms: number): void {
      skewMs = ms;
    },
    async budgetGet(): Promise<BudgetView> {
      const outcome = await runCommand(commands, 'budget.get', {});
      if (!outcome.ok) throw new Error(JSON.stringify(outcome.error));
      return outcome.result as BudgetView;
    },
  };
}
