/**
 * One process contending for data-folder locks: for each round the parent names a folder and an
 * instant; the worker spins until that instant (so every contender calls at once), tries the lock,
 * and keeps what it got until it exits.
 */
import { lockDataFolder } from '../../../src/studio/lock';

type Round = { dataDir: string; startAt: number };

process.on('message', (round: Round) => {
  while (Date.now() < round.startAt) {
    // spin: a timer would spread the contenders over milliseconds
  }
  try {
    lockDataFolder(round.dataDir);
    process.send?.({ dataDir: round.dataDir, got: true });
  } catch (err) {
    process.send?.({ dataDir: round.dataDir, got: false, error: (err as Error).name });
  }
});
process.send?.({ ready: process.pid });
