/**
 * How often the job of a photo exported `partial` is asked for the rest (`takePartialPoll`): once
 * per run, at most `PARTIAL_POLLS_PER_DAY` times per UTC day, for a day after its submission, and
 * never again once the service forgot it. Counted in the studio database, as the runs share it.
 */
import { describe, expect, it } from 'vitest';
import { type StudioDB } from '../../src/studio/db/open';
import {
  givePartialUp,
  PARTIAL_POLLS_PER_DAY,
  takePartialPoll,
} from '../../src/studio/result-download';
import { scratchStudioDb } from '../support/scratch-studio-db';

function studioDb(): StudioDB {
  const db = scratchStudioDb('partial-polls');
  return db;
}

describe('polls for the rest of a partial job', () => {
  const item = { id: 'item_a', submittedAt: '2026-11-26T10:00:00.000Z' };

  it('are counted per UTC day and stop a day after the submission', () => {
    const db = studioDb();
    const at = (iso: string) => takePartialPoll(db, item, new Date(iso));
    for (let i = 0; i < PARTIAL_POLLS_PER_DAY; i++)
      expect(at('2026-11-26T12:00:00.000Z')).toEqual({ ok: true });
    expect(at('2026-11-26T23:00:00.000Z')).toMatchObject({ ok: false, final: false });
    // A new UTC day, still within a day of the submission.
    expect(at('2026-11-27T00:30:00.000Z')).toEqual({ ok: true });
    expect(at('2026-11-27T10:00:01.000Z')).toMatchObject({
      ok: false,
      final: true,
      why: 'submitted more than a day ago',
    });
    // Another item keeps its own count.
    expect(
      takePartialPoll(db, { ...item, id: 'item_b' }, new Date('2026-11-26T23:00:00Z')),
    ).toEqual({ ok: true });
  });

  it('never ask a job the service forgot', () => {
    const db = studioDb();
    givePartialUp(db, item.id);
    expect(takePartialPoll(db, item, new Date('2026-11-26T12:00:00.000Z'))).toMatchObject({
      ok: false,
      final: true,
    });
  });
});
